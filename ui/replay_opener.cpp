#include "ui/replay_opener.h"

#include "ui/client/commands.h"
#include "ui/client/replay_navigator.h"
#include "ui/console_store.h"
#include "ui/local_replay.h"

#include <algorithm>

namespace fulcrum::ui {

using namespace protocol;

namespace {

QString text(const std::string& s)
{
    return QString::fromStdString(s);
}

} // namespace

ReplayOpener::ReplayOpener(
    ProtocolClient& client, Commands& commands, ConsoleStore& store, ReplayNavigator& navigator, QObject* parent)
    : QObject(parent)
    , client_(client)
    , commands_(commands)
    , store_(store)
    , navigator_(navigator)
{
}

ReplayOpener::~ReplayOpener() = default;

void ReplayOpener::fail(const QString& why)
{
    phase_ = Phase::None;
    emit failed(why);
}

void ReplayOpener::open_server_run(const QString& database, RunId run, std::optional<std::int64_t> at)
{
    open_at_ = at;
    OpenReplay open;
    open.database = database.toStdString();
    open.run = run;
    // Without an iteration to stand at, load it all as fast as it can be read; with one,
    // open paused and let the navigator fast-forward there.
    open.speed = open_at_ ? 1 : 0;
    open.paused = open_at_.has_value();
    if (commands_.open_replay(open))
        phase_ = Phase::Loading;
}

void ReplayOpener::open_run_file(const QString& path, std::optional<std::int64_t> at)
{
    if (client_.state() == ProtocolClient::State::Connected && !local_)
        live_address_ = client_.address();
    open_at_ = at;
    phase_ = Phase::ListingFile;
    local_ = std::make_unique<LocalReplayHost>();
    if (!daemon_path_.isEmpty())
        local_->set_daemon(daemon_path_);
    connect(
        local_.get(), &LocalReplayHost::ready, this, [this](const ServerAddress& address) { client_.open(address); });
    connect(local_.get(), &LocalReplayHost::failed, this, &ReplayOpener::fail);
    emit status(QStringLiteral("opening %1…").arg(path));
    local_->start(path);
}

void ReplayOpener::on_runs(const std::vector<RunListing>& runs)
{
    if (!wants_runs())
        return;
    std::vector<RunListing> mine;
    for (const RunListing& r : runs)
        if (text(r.database) == local_->database_name())
            mine.push_back(r);
    const QString file = local_->database_path();
    if (mine.empty())
        return fail(QStringLiteral("%1 cannot be replayed: fulcrumd does not list it as a run store").arg(file));
    if (mine.front().status.rfind("unreadable", 0) == 0)
        return fail(QStringLiteral("%1 cannot be replayed: it is not a Fulcrum run store, or it is damaged (%2)")
                        .arg(file, text(mine.front().status)));
    std::optional<RunId> run = mine.front().run;
    if (mine.size() > 1 && choose_run_)
        run = choose_run_(file, mine);
    if (!run) { // the operator chose none
        phase_ = Phase::None;
        return;
    }
    open_server_run(local_->database_name(), *run, open_at_);
}

void ReplayOpener::on_message(const ServerMessage& message)
{
    if (phase_ != Phase::Loading)
        return;
    if (open_at_) {
        // Opened paused at the start: once its opening snapshot is in, move to the iteration.
        if (std::holds_alternative<SnapshotEnd>(message) && store_.replay_state() && store_.replay_state()->seeked) {
            phase_ = Phase::Positioning;
            navigator_.set_pause_on_arrival(true);
            navigator_.go_to_iteration(*open_at_);
        }
        return;
    }
    if (const auto* state = std::get_if<ReplayState>(&message);
        state && state->replay == store_.source() && state->state == ReplayPhase::Finished) {
        phase_ = Phase::Ready;
        // Loaded as fast as it could be read; played again, it goes at the run's own pace.
        ReplayCommand speed;
        speed.replay = state->replay;
        speed.action = ReplayAction::SetSpeed;
        speed.speed = 1;
        commands_.replay(speed);
        emit ready(QStringLiteral("replay loaded: %1 iterations of %2").arg(state->length).arg(text(state->database)));
    }
}

void ReplayOpener::on_arrived()
{
    if (phase_ != Phase::Positioning)
        return;
    phase_ = Phase::Ready;
    emit ready(QStringLiteral("replay at iteration %1").arg(open_at_.value_or(0)));
}

void ReplayOpener::on_refused()
{
    if (phase_ != Phase::None && phase_ != Phase::Ready)
        phase_ = Phase::None;
}

std::optional<double> ReplayOpener::loading_fraction() const
{
    const ReplayState* s = store_.replay_state();
    if (!s || phase_ != Phase::Loading || open_at_ || s->end_time_s <= 0)
        return std::nullopt;
    return std::min(1.0, navigator_.delivered_time_s() / s->end_time_s);
}

void ReplayOpener::back_to_live()
{
    if (store_.replaying() && client_.state() == ProtocolClient::State::Connected) {
        ReplayCommand close;
        close.replay = store_.source();
        close.action = ReplayAction::Close;
        commands_.replay(close);
    }
    if (local_) // its fulcrumd took the live connection's place: the live server's snapshot refills
        store_.drop_live_aside();
    store_.follow(0);
    phase_ = Phase::None;
    open_at_.reset();
    if (local_) {
        local_.reset();
        if (live_address_)
            client_.open(*live_address_);
        else
            client_.close();
    } // a server's replay: the live stream went on meanwhile, and the store kept it aside
}

void ReplayOpener::connecting_to(const ServerAddress& address)
{
    if (!live_address_ || address.url != live_address_->url) // another server: its jobs' ids may repeat
        store_.forget_server();
    else if (store_.replaying())
        store_.follow(0);
    local_.reset();
    phase_ = Phase::None;
    live_address_ = address;
}

} // namespace fulcrum::ui
