#!/usr/bin/env bash
# Debian packages the project needs beside its Python and npm dependencies: the code runner's
# sandbox (bubblewrap, python3-seccomp) and the answer languages' toolchains (Node.js, a JDK,
# g++, Go) always; with --node, Node.js and npm to install the
# editor's files; with --browser, Chromium for the browser tests and promtool (Debian's prometheus)
# for the alert rules' test; with --deploy, nginx, for the tests of deploy/ (never started as the
# system's service); with --bench, the HTTP load
# generator wrk; with --rabbitmq, RabbitMQ (Debian's rabbitmq-server, which starts its service),
# the optional AMQP broker that `make test` runs the failure tests on too (the production file is
# deploy/rabbitmq/rabbitmq.conf). Installs them when running as root on a Debian-like machine; elsewhere prints
# what is missing and carries on (the runner then reports a weaker mode, or refuses to run code,
# and /healthz says which; the browser tests fail, naming what is missing; the benchmarks fall back
# to a slower Python load generator).
set -u
need=()
command -v bwrap >/dev/null 2>&1 || need+=(bubblewrap)
/usr/bin/python3 -c 'import seccomp' >/dev/null 2>&1 || need+=(python3-seccomp)
# The answer languages beside Python (evaluation/languages/): a missing one is listed as
# unavailable and refused, never queued.
command -v node >/dev/null 2>&1 || need+=(nodejs)
command -v javac >/dev/null 2>&1 || need+=(default-jdk-headless)
command -v g++ >/dev/null 2>&1 || need+=(g++)
command -v go >/dev/null 2>&1 || need+=(golang-go)
for flag in "$@"; do
  case "$flag" in
    --node) command -v npm >/dev/null 2>&1 || need+=(nodejs npm) ;;
    --browser)
      command -v chromium >/dev/null 2>&1 || need+=(chromium)
      command -v promtool >/dev/null 2>&1 || need+=(prometheus)
      ;;
    # nginx-light: no service to start or module to load beyond the proxy and auth_request.
    --deploy) command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx-light) ;;
    --bench) command -v wrk >/dev/null 2>&1 || need+=(wrk) ;;
    --rabbitmq) [ -x /usr/sbin/rabbitmqctl ] || command -v rabbitmqctl >/dev/null 2>&1 || need+=(rabbitmq-server) ;;
  esac
done
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup: installing ${need[*]}"
  (apt-get install -y -qq "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq "${need[@]}" >/dev/null 2>&1; }) ||
    echo "setup: could not install ${need[*]}; the code runner will use what it finds"
else
  echo "setup: missing ${need[*]} (install them with your package manager)"
fi
exit 0
