#!/usr/bin/env node
/**
 * CI: the README's "First steps", run as a newcomer runs them right after `npm install` in a fresh clone:
 * `npm start` in one terminal, then every command of the section's sh blocks in another. The commands are read
 * from README.md itself, so the README cannot drift from what works. A command must exit 0, and the comment
 * lines right under it (`# …`) are output it must print. The server is stopped at the end, whatever happened.
 *
 *   node .ci/first-steps.mjs            (from the repository root, after npm ci)
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const README = 'README.md';
const STATUS_URL = 'http://127.0.0.1:5280/api/status';

/** The section's commands: [{ command, expected: [lines] }], continuation lines joined, trailing comments cut. */
function firstSteps() {
  const text = readFileSync(README, 'utf8');
  const section = /^## First steps\n([\s\S]*?)^## /m.exec(text)?.[1];
  if (!section) throw new Error(`${README} has no "## First steps" section`);
  const steps = [];
  for (const [, block] of section.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let pending = '';
    for (const raw of block.split('\n')) {
      const line = raw.trimEnd();
      if (!line.trim()) continue;
      if (!pending && line.trimStart().startsWith('#')) {
        steps.at(-1)?.expected.push(line.trimStart().slice(1).trim());
        continue;
      }
      if (line.endsWith('\\')) {
        pending += `${line.slice(0, -1)} `;
        continue;
      }
      // A comment after the command stays: bash skips it.
      const command = `${pending}${line}`.trim();
      pending = '';
      steps.push({ command, expected: [] });
    }
  }
  if (!steps.length) throw new Error(`the "First steps" section of ${README} has no commands`);
  return steps;
}

async function waitForServer(server, seconds) {
  for (let i = 0; i < seconds * 2; i++) {
    if (server.exitCode !== null) return false;
    try {
      const res = await fetch(STATUS_URL, { method: 'POST' });
      if (res.status === 200) return true;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

const steps = firstSteps();
let serverOutput = '';
// `npm start` as its own process group, so that stopping it stops the node process npm runs.
const server = spawn('npm', ['start'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
server.stdout.on('data', (d) => (serverOutput += d));
server.stderr.on('data', (d) => (serverOutput += d));

let failures = 0;
try {
  if (!(await waitForServer(server, 90))) throw new Error(`npm start did not serve ${STATUS_URL}:\n${serverOutput}`);
  for (const { command, expected } of steps) {
    const run = spawnSync('bash', ['-c', command], { encoding: 'utf8', timeout: 120_000 });
    const output = `${run.stdout ?? ''}${run.stderr ?? ''}`;
    const missing = expected.filter((line) => !output.includes(line));
    if (run.status !== 0 || missing.length) {
      failures++;
      console.error(`first steps: FAILED  ${command}\n  exit status ${run.status}${missing.length ? `\n  missing output: ${missing.join(' | ')}` : ''}\n${output.replace(/^/gm, '  | ')}`);
    } else {
      console.log(`first steps: ok  ${command}`);
    }
  }
} catch (err) {
  failures++;
  console.error(`first steps: ${err.message}`);
} finally {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // Already gone.
  }
}
if (failures) {
  console.error(`first steps: ${failures} of ${steps.length} failed; server output:\n${serverOutput}`);
  process.exit(1);
}
console.log(`first steps: all ${steps.length} commands of README.md work on a fresh clone`);
