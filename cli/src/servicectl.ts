#!/usr/bin/env node
/**
 * servicectl: run any command of the running server, and run the server.
 *
 *   servicectl [--config FILE] [--json] <command> [args…]
 *   servicectl [--config FILE] foreground | start | stop | restart | status | started | stopped
 *   servicectl [--config FILE] help [command | tag]
 */
import { existsSync } from 'node:fs';
import { locateConfig, KERNEL_VERSION, type ConfigLocation } from '@service/kernel/cli';
import { EXIT, fail } from './exit.js';
import { help } from './help.js';
import { foreground, restart, start, status, stop, waitFor } from './lifecycle.js';
import { runCommand } from './run-command.js';

const USAGE = `usage: servicectl [--config FILE] [--json] <command> [arguments...]
       servicectl [--config FILE] foreground | start | stop | restart | status | started | stopped
       servicectl [--config FILE] help [command | tag]

The configuration is --config FILE, else $SERVICE_CONFIG, else ./service.yml, else ./config.example.yml.
--json prints the exact JSON that /api returns. Exit status: 0 success, 1 failure (or an ST command
answered 1), 2 usage, 3 server not running, 4 unknown command, 5 permission denied, 70 internal error,
78 invalid configuration.`;

interface Invocation {
  config?: string;
  json: boolean;
  daemon: boolean;
  command?: string;
  args: string[];
}

/** Commands of servicectl itself: options may also follow them (`npm start -- --config FILE`). */
const OWN_COMMANDS = new Set(['foreground', 'start', 'stop', 'restart', 'status', 'started', 'stopped', 'help']);

function parse(argv: readonly string[]): Invocation {
  const out: Invocation = { json: false, daemon: false, args: [] };
  let i = readOptions(argv, 0, out);
  out.command = argv[i];
  const rest = argv.slice(i + 1);
  if (out.command !== undefined && OWN_COMMANDS.has(out.command)) {
    // Options may come after servicectl's own commands; their other words stay arguments.
    for (let j = 0; j < rest.length; j++) {
      const next = rest[j]!.startsWith('-') ? readOptions(rest, j, out, true) : j;
      if (next === j) out.args.push(rest[j]!);
      else j = next - 1;
    }
  } else out.args = rest;
  return out;
}

/** Reads options from `argv[i]` on; returns the index of the first word that is not one. */
function readOptions(argv: readonly string[], i: number, out: Invocation, one = false): number {
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config') {
      out.config = argv[++i];
      if (out.config === undefined) fail(`--config needs a file\n${USAGE}`, EXIT.usage);
    } else if (arg.startsWith('--config=')) out.config = arg.slice('--config='.length);
    else if (arg === '--json') out.json = true;
    else if (arg === '--daemon') out.daemon = true;
    else if (arg === '-h' || arg === '--help') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(EXIT.ok);
    } else if (arg === '--version') {
      process.stdout.write(`servicectl ${KERNEL_VERSION}\n`);
      process.exit(EXIT.ok);
    } else if (arg.startsWith('-') && arg !== '-') fail(`unknown option ${arg}\n${USAGE}`, EXIT.usage);
    else break;
    if (one) return i + 1;
  }
  return i;
}

function configFile(given: string | undefined): string {
  if (given) return given;
  if (process.env.SERVICE_CONFIG) return process.env.SERVICE_CONFIG;
  for (const candidate of ['service.yml', 'config.example.yml']) if (existsSync(candidate)) return candidate;
  return fail(`no configuration file: give one with --config FILE (or set SERVICE_CONFIG)`, EXIT.usage);
}

const invocation = parse(process.argv.slice(2));
if (!invocation.command) fail(`no command given\n${USAGE}`, EXIT.usage);
let location: ConfigLocation;
try {
  location = locateConfig(configFile(invocation.config));
} catch (err) {
  fail((err as Error).message, EXIT.config);
}
// A running server keeps the configuration it validated: a broken file must not keep servicectl from it.
if (location.problem) process.stderr.write(`servicectl: warning: ${location.problem}; using data_dir ${location.dataDir}\n`);
const { command, args, json } = invocation;
const noArgs = () => {
  if (args.length) fail(`${command} takes no arguments`, EXIT.usage);
};

/**
 * The server can go away mid-command (killed, crashed): say so in one line, not with a stack trace. Only
 * for commands that talk to a server: in the foreground the server itself runs in this process.
 */
function reportLostServer(): void {
  process.on('uncaughtException', lostServer);
  process.on('unhandledRejection', lostServer);
}

function lostServer(err: unknown): never {
  const message = err instanceof Error ? err.message : String(err);
  return fail(`${message}: the command's outcome is unknown, see the server's log`, EXIT.internal);
}

switch (command) {
  case 'foreground':
    noArgs();
    await foreground(location, { daemon: invocation.daemon });
    break;
  case 'start':
    noArgs();
    await start(location);
    break;
  case 'stop':
    noArgs();
    reportLostServer();
    await stop(location);
    break;
  case 'restart':
    noArgs();
    reportLostServer();
    await restart(location);
    break;
  case 'status':
    noArgs();
    await status(location, json);
    break;
  case 'started':
  case 'stopped':
    noArgs();
    await waitFor(location, command);
    break;
  case 'help':
    if (args.length > 1) fail('usage: servicectl help [command | tag]', EXIT.usage);
    await help(location, args[0]);
    break;
  default:
    reportLostServer();
    await runCommand(command!, args, { json, location });
}
