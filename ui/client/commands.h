#pragma once

#include "protocol/messages.h"

#include <QObject>
#include <QString>
#include <map>
#include <optional>
#include <vector>

namespace fulcrum::ui {

class ConsoleStore;
class ProtocolClient;

// The one command interface the views use: every operator action and replay control goes
// out through here as a protocol request, and its fate comes back as a signal. A request in
// flight when the connection drops is reported as of unknown fate; once the reconnect's
// snapshot has arrived, its fate is read from the server's state and reported.
class Commands : public QObject {
    Q_OBJECT
public:
    Commands(ProtocolClient& client, ConsoleStore& store, QObject* parent = nullptr);

    // Connected with the operator role (viewers can watch and replay, not command).
    bool can_command() const;

    // Each sends its request and returns true, or emits failed() and returns false when it
    // cannot be sent (not connected, not an operator).
    bool pin(JobId job, WorkerId worker, std::int32_t batch_size);
    bool unpin(JobId job, WorkerId worker);
    bool exclude(JobId job, WorkerId worker, std::optional<double> for_s);
    bool include(JobId job, WorkerId worker);
    bool job_action(JobId job, protocol::JobAction action);
    bool change(JobId job, protocol::JobSetting setting, const QString& spec_json);
    bool resize(JobId job, ResizeAction action, std::optional<WorkerId> worker);
    // set-cluster-policy: the placement, elastic and/or communication policy from now on.
    bool set_cluster_policy(std::optional<std::string> placement, std::optional<std::string> elastic,
        std::optional<std::string> comm = std::nullopt);
    bool submit(const QString& scenario_json, const QString& source);

    bool list_runs();
    bool open_replay(const protocol::OpenReplay& open);
    // Returns the request's id (its seek's snapshot-end carries it).
    std::optional<std::string> replay(protocol::ReplayCommand command);

    // "pin worker 2 of job 1 at 96 samples"
    static QString describe(const protocol::ClientMessage& message);
    // After a reconnect: whether the server's state shows the request applied.
    static QString fate(const protocol::ClientMessage& message, const ConsoleStore& store);

signals:
    void sent(const QString& what);
    void succeeded(const QString& what);
    void failed(const QString& what, const QString& why);
    void fateUnknown(const QString& what, const QString& why);
    void fateKnown(const QString& what, const QString& fate);
    void runsListed(const std::vector<fulcrum::protocol::RunListing>& runs);
    void replayOpened(std::int64_t replay);

private:
    std::optional<std::string> send(protocol::ClientMessage message, bool command);
    void on_reply(const protocol::Reply& reply);

    ProtocolClient& client_;
    ConsoleStore& store_;
    std::map<std::string, protocol::ClientMessage> in_flight_;
    std::vector<protocol::ClientMessage> unknown_; // lost with a connection, fate not yet read
};

} // namespace fulcrum::ui
