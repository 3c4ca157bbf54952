# Shared by bin/dev and bin/check: make (or reuse) .venv and install the project into it, every
# dependency at the version requirements.lock pins (bin/lock writes it). Reinstalls only when
# pyproject.toml or the lock changes, so the second run starts at once.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)" >&2
  exit 1
fi
VENV="${SNG_VENV:-$ROOT/.venv}"
if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV"
  "$PY" -m venv "$VENV"
fi
STAMP="$VENV/.sng-installed-$1"
UV_VERSION=0.13.8  # the installer's own pin (bumped on purpose, like the lock)
WANT="$(cat pyproject.toml requirements.lock | sha256sum | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  echo "installing the project into $VENV (first run takes a minute or two)"
  # uv installs the lock in seconds where pip takes a minute and a half (docs/versioning.md);
  # pip stays the fallback when uv cannot be had or cannot reach an index.
  if "$VENV/bin/python" -m pip install --quiet "uv==$UV_VERSION" \
    && "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" \
      -r requirements.lock \
    && "$VENV/bin/python" -m uv pip install --quiet --python "$VENV/bin/python" \
      --no-deps -e ".[$1]"; then
    :
  else
    echo "uv did not install the lock; installing with pip"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -r requirements.lock
    "$VENV/bin/python" -m pip install --quiet --no-deps -e ".[$1]"
  fi
  echo "$WANT" > "$STAMP"
fi
export PATH="$VENV/bin:$PATH"
# The contracts' compiler and the anvil binary (npm packages), once per clean checkout.
if [ ! -d contracts/node_modules ] && command -v npm >/dev/null 2>&1; then
  echo "installing contracts/node_modules (solc, OpenZeppelin, anvil)"
  npm ci --prefix contracts --no-audit --no-fund --loglevel=error
fi
# The test identity provider (panva's oidc-provider) for the players' OIDC sign-in test and
# trying the flow by hand (docs/play.md), likewise once per clean checkout.
if [ ! -d devtools/oidc-idp/node_modules ] && command -v npm >/dev/null 2>&1; then
  echo "installing devtools/oidc-idp/node_modules (oidc-provider, the test IdP)"
  npm ci --prefix devtools/oidc-idp --no-audit --no-fund --loglevel=error
fi
