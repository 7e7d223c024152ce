#!/bin/sh
# What every hook of ctxkeep's Claude Code plugin runs: the user's ctxkeep,
# told it runs from the plugin (it steps aside in a project without
# project-state.md, or whose .claude/settings.json has ctxkeep's own hooks).
# $1 is the event the plugin wired this call to.
#
# This runs on every agent event: it only looks at files, and nothing here
# downloads. ctxkeep is the one on PATH, else one where npm, pnpm, Volta or
# Cargo put their commands (Claude Code started outside a login shell may
# lack those folders on its PATH), else the one `npm prefix -g` names, looked
# up once at the session's start and remembered.
remembered="${XDG_CACHE_HOME:-$HOME/.cache}/ctxkeep/plugin-binary"

find_ctxkeep() {
  if command -v ctxkeep >/dev/null 2>&1; then
    echo ctxkeep
    return 0
  fi
  for dir in ${NPM_CONFIG_PREFIX:+"$NPM_CONFIG_PREFIX/bin"} ${PNPM_HOME:+"$PNPM_HOME"} \
    ${NVM_BIN:+"$NVM_BIN"} "$HOME/.npm-global/bin" "$HOME/.local/share/pnpm" \
    "$HOME/Library/pnpm" "$HOME/.volta/bin" "$HOME/.cargo/bin" "$HOME/.local/bin" \
    /opt/homebrew/bin /usr/local/bin; do
    if [ -x "$dir/ctxkeep" ]; then
      echo "$dir/ctxkeep"
      return 0
    fi
  done
  if [ -r "$remembered" ]; then
    read -r path <"$remembered"
    if [ -x "$path" ]; then
      echo "$path"
      return 0
    fi
  fi
  if [ "$1" = SessionStart ] && command -v npm >/dev/null 2>&1; then
    prefix=$(npm prefix -g 2>/dev/null)
    for path in "$prefix/bin/ctxkeep" "$prefix/ctxkeep"; do
      if [ -n "$prefix" ] && [ -x "$path" ]; then
        mkdir -p "${remembered%/*}" 2>/dev/null && echo "$path" >"$remembered" 2>/dev/null
        echo "$path"
        return 0
      fi
    done
  fi
  return 1
}

if ctxkeep=$(find_ctxkeep "$1"); then
  exec "$ctxkeep" hook claude-code --plugin
fi
# No ctxkeep: say so once, at the session's start, and never block.
cat >/dev/null
if [ "$1" = SessionStart ]; then
  # shellcheck disable=SC2016 # the backquotes are the message's own
  printf '%s\n' '{"systemMessage": "ctxkeep plugin: the ctxkeep command is not on PATH, so nothing keeps project-state.md in this session. Install it with `npm install -g ctxkeep` (no Rust needed; from the first release on) or, in a clone of its repository, `cargo install --locked --path .`, then start a new session."}'
fi
exit 0
