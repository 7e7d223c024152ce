#!/bin/sh
# What every hook of ctxkeep's Claude Code plugin runs: the ctxkeep on the
# user's PATH, told it runs from the plugin (it steps aside in a project
# without project-state.md, or whose .claude/settings.json has ctxkeep's
# own hooks). $1 is the event the plugin wired this call to.
if command -v ctxkeep >/dev/null 2>&1; then
  exec ctxkeep hook claude-code --plugin
fi
# No ctxkeep: say so once, at the session's start, and never block.
cat >/dev/null
if [ "$1" = SessionStart ]; then
  printf '%s\n' '{"systemMessage": "ctxkeep plugin: the ctxkeep command is not on PATH, so nothing keeps project-state.md in this session. Install it (cargo install ctxkeep, or a release binary) where Claude Code finds it, then start a new session."}'
fi
exit 0
