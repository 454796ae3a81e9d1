"use strict";
// A Node process's clock for replaying a recorded incident (tests only): preload it with
// `node --require`, and Date reads the real clock plus the offset in milliseconds that the
// file named by INCIDENT_BOT_CLOCK_FILE holds, read afresh at every reading.
const fs = require("node:fs");

const RealDate = Date;
const file = process.env.INCIDENT_BOT_CLOCK_FILE;

function offset() {
  try {
    return Number(fs.readFileSync(file, "utf8")) || 0;
  } catch {
    return 0;
  }
}

function ReplayDate(...args) {
  const now = () => new RealDate(RealDate.now() + offset());
  if (!new.target) return now().toString();
  return args.length ? new RealDate(...args) : now();
}
ReplayDate.prototype = RealDate.prototype;
ReplayDate.now = () => RealDate.now() + offset();
ReplayDate.parse = RealDate.parse;
ReplayDate.UTC = RealDate.UTC;
globalThis.Date = ReplayDate;
