package lua

import "embed"

// Files holds every .lua file of this folder: one file per script (the
// script's name is the file name without ".lua"), and record.lua, the shared
// helpers. Only the script layer (worker/internal/script) reads it: it
// declares each script once and assembles what is sent to Redis.
//
//go:embed *.lua
var Files embed.FS
