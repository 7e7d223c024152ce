"use strict";
// One npm package per platform, each holding only the ctxkeep binary built for
// `target`. `os`, `cpu` and `libc` go into its package.json, so npm and pnpm
// install only the one that fits. A musl build is linked statically and also
// runs on glibc systems: linux arm64 ships the same binary in both packages.
module.exports = [
  { pkg: "@ctxkeep/cli-linux-x64-gnu", os: "linux", cpu: "x64", libc: "glibc", target: "x86_64-unknown-linux-gnu" },
  { pkg: "@ctxkeep/cli-linux-x64-musl", os: "linux", cpu: "x64", libc: "musl", target: "x86_64-unknown-linux-musl" },
  { pkg: "@ctxkeep/cli-linux-arm64-gnu", os: "linux", cpu: "arm64", libc: "glibc", target: "aarch64-unknown-linux-musl" },
  { pkg: "@ctxkeep/cli-linux-arm64-musl", os: "linux", cpu: "arm64", libc: "musl", target: "aarch64-unknown-linux-musl" },
  { pkg: "@ctxkeep/cli-darwin-x64", os: "darwin", cpu: "x64", target: "x86_64-apple-darwin" },
  { pkg: "@ctxkeep/cli-darwin-arm64", os: "darwin", cpu: "arm64", target: "aarch64-apple-darwin" },
  { pkg: "@ctxkeep/cli-win32-x64", os: "win32", cpu: "x64", target: "x86_64-pc-windows-msvc" },
];
