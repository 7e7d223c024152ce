#!/bin/sh
# What every hook of ctxkeep's Claude Code plugin runs: the user's ctxkeep,
# told it runs from the plugin (it steps aside in a project without
# project-state.md, or whose .claude/settings.json has ctxkeep's own hooks).
# $1 is the event the plugin wired this call to. The binary is found by
# ctxkeep.sh beside this file, as for the plugin's MCP server and slash commands.
. "$(dirname "$0")/ctxkeep.sh"

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
