#!/bin/sh
# The one place ctxkeep's Claude Code plugin finds the ctxkeep binary, for its hooks
# (scripts/hook.sh), its MCP server (.mcp.json) and its slash commands (commands/*.md) alike:
# run as `sh ctxkeep.sh ARGS...`, it runs `ctxkeep ARGS...`; sourced (by hook.sh), it only
# defines find_ctxkeep.
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


# Run, not sourced: the command itself (the MCP server starts with the session; a slash
# command is typed: neither is on the hot path, so `npm prefix -g` may be asked).
case "${0##*/}" in
ctxkeep.sh)
  if ctxkeep=$(find_ctxkeep SessionStart); then
    exec "$ctxkeep" "$@"
  fi
  echo "ctxkeep plugin: the ctxkeep command is not on PATH; install it with \`npm install -g ctxkeep\` (or \`cargo install --locked --path .\` in a clone of its repository)" >&2
  exit 127
  ;;
esac
