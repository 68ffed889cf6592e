// Starting toy serve for the client tests: the binary run.sh built (TOY_BIN),
// or `go run ./cmd/toy`, on a free port (--addr 127.0.0.1:0; the port is read
// back from the line the server prints).

import { spawn, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const root = path.resolve(here, "../..");

function toyCommand(args) {
  const bin = process.env.TOY_BIN;
  return bin ? [bin, args] : ["go", ["run", "./cmd/toy", ...args]];
}

// serveFlags is the text of `toy serve --help`: what this build offers.
export function serveHelp() {
  const [cmd, args] = toyCommand(["serve", "--help"]);
  try {
    return execFileSync(cmd, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    return String(e.stdout || "") + String(e.stderr || ""); // --help may exit non-zero
  }
}

// startServer runs `toy serve ARGS --addr 127.0.0.1:0 --quiet` and resolves,
// once it listens, to {url, pid, log(), stop()}.
export function startServer(args = [], env = {}) {
  const [cmd, cargs] = toyCommand(["serve", ...args, "--addr", "127.0.0.1:0", "--quiet"]);
  const proc = spawn(cmd, cargs, { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill(); reject(new Error("toy serve did not start in 120 s:\n" + log)); }, 120_000);
    proc.stderr.setEncoding("utf8");
    proc.stderr.on("data", (s) => {
      log += s;
      const m = log.match(/listening on (http:\/\/[0-9.:]+)/);
      if (m && timer) {
        clearTimeout(timer);
        resolve({
          url: m[1],
          pid: proc.pid,
          log: () => log,
          exited: () => proc.exitCode !== null || proc.signalCode !== null,
          stop: () => new Promise((done) => {
            if (proc.exitCode !== null || proc.signalCode !== null) return done();
            proc.once("exit", done);
            proc.kill("SIGTERM");
          }),
        });
      }
    });
    proc.on("exit", (code) => { clearTimeout(timer); reject(new Error(`toy serve exited (${code}):\n${log}`)); });
  });
}

// rssMiB is a process's resident set size in MiB (Linux).
export function rssMiB(pid) {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

// metric reads one unlabelled value from GET /metrics, or undefined when the
// server has no /metrics or not that series.
export async function metric(url, name, headers = {}) {
  const res = await fetch(url + "/metrics", { headers });
  if (!res.ok) return undefined;
  const m = (await res.text()).match(new RegExp(`^${name} ([0-9.e+-]+)$`, "m"));
  return m ? Number(m[1]) : undefined;
}
