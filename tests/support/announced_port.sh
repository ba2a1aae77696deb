# Sourced by the shell tests that start fulcrumd: announced_port LOG prints the port fulcrumd
# announced in its log ("serving ws://127.0.0.1:PORT"), waiting up to 10 s; nothing if it
# never did.
announced_port() {
    local port=""
    for _ in $(seq 100); do
        port=$(grep -o 'serving wss\?://127.0.0.1:[0-9]*' "$1" 2>/dev/null | grep -o '[0-9]*$' || true)
        [ -n "$port" ] && break
        sleep 0.1
    done
    echo "$port"
}
