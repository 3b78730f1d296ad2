/**
 * Runs one command: over the control socket when the server runs; for the few kernel commands that allow
 * it (print_sql_schema, mnesia_info_ctl, mnesia_change…), in a maintenance kernel when it does not.
 * Prints the result as format.ts says, or the exact /api JSON with --json, and exits with the status of
 * exit.ts.
 */
import { join } from 'node:path';
import { CONTROL_SOCKET, ERROR_KINDS, formatCliOutput, type ConfigLocation, type ControlFrame, type ErrorKind, type ResultType } from '@service/kernel/cli';
import type { Server } from '@service/kernel';
import { ControlClient, NotRunning } from './client.js';
import { EXIT, exitStatusOf, fail } from './exit.js';
import { Progress } from './progress.js';

export interface RunOptions {
  readonly json: boolean;
  readonly location: ConfigLocation;
}

export function socketPath(location: ConfigLocation): string {
  return join(location.dataDir, CONTROL_SOCKET);
}

export function notRunningMessage(location: ConfigLocation, reason: string): string {
  return `server not running (${reason}): start it with servicectl --config ${location.file} start (or foreground)`;
}

export async function runCommand(command: string, argv: readonly string[], options: RunOptions): Promise<never> {
  let client: ControlClient;
  try {
    client = await ControlClient.connect(socketPath(options.location));
  } catch (err) {
    if (!(err instanceof NotRunning)) throw err;
    // Only with the server stopped does servicectl load the whole kernel: to know and run the offline commands.
    const { KERNEL_COMMANDS } = await import('@service/kernel');
    if (KERNEL_COMMANDS.some((d) => d.name === command && d.offline)) return runOffline(command, argv, options);
    return fail(notRunningMessage(options.location, err.message), EXIT.notRunning);
  }
  const progress = new Progress(command);
  const frame = await client.request(
    { op: 'call', command, argv: [...argv] },
    {
      progress: (done, total, label) => progress.update(done, total, label),
      output: (text) => {
        progress.stop();
        process.stdout.write(text);
      },
    },
  );
  progress.stop();
  client.close();
  return finish(frame, options);
}

/** The command's declaration says it may (or must) run with the server stopped: boot a maintenance kernel. */
async function runOffline(command: string, argv: readonly string[], options: RunOptions): Promise<never> {
  const { ConfigError, ModuleError, Server, UsageError, asCommandError, parseArgv } = await import('@service/kernel');
  let server: Server;
  try {
    server = await Server.start({ configFile: options.location.file, maintenance: true });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ModuleError) return fail(err.message, EXIT.config);
    return fail(`cannot open the server's data: ${(err as Error).message}`, EXIT.failed);
  }
  const progress = new Progress(command);
  let frame: ControlFrame;
  try {
    const { commands } = server.services;
    const registered = commands.registry.resolve(command) ?? (await commands.unknown(command));
    const result = await commands.execute(command, parseArgv(registered.decl, argv), { frontend: 'service_ctl' }, {
      progress: (done, total, label) => progress.update(done, total, label),
      output: (text) => {
        progress.stop();
        process.stdout.write(text);
      },
    });
    frame = { id: 0, type: 'result', command, result, resultType: registered.decl.result.type };
  } catch (err) {
    const error = asCommandError(err);
    frame = { id: 0, type: 'error', kind: err instanceof UsageError ? 'usage' : (error?.kind ?? 'internal'), message: error?.message ?? String(err) };
  } finally {
    progress.stop();
    await server.shutdown();
  }
  return finish(frame, options);
}

function finish(frame: ControlFrame, options: RunOptions): never {
  if (frame.type === 'result') {
    if (options.json) process.stdout.write(`${JSON.stringify(frame.result)}\n`);
    else print(formatCliOutput(frame.result, frame.resultType as ResultType));
    process.exit(frame.resultType === 'rescode' && frame.result === 1 ? EXIT.failed : EXIT.ok);
  }
  if (frame.type !== 'error') return fail(`unexpected answer from the server: ${frame.type}`, EXIT.internal);
  if (options.json) {
    const kind: ErrorKind = frame.kind === 'usage' ? 'bad_argument' : frame.kind;
    process.stdout.write(`${JSON.stringify({ status: 'error', code: ERROR_KINDS[kind].code, message: frame.message })}\n`);
  }
  return fail(withAdvice(frame.kind, frame.message), exitStatusOf(frame.kind));
}

function print(text: string): void {
  if (text) process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
}

/** The one-line message, with what to do where the message alone does not say it. */
function withAdvice(kind: ErrorKind | 'usage', message: string): string {
  switch (kind) {
    case 'unknown_command':
      return `${message}: servicectl help lists the commands`;
    case 'forbidden':
      return `${message}: the "console commands" group of api_permissions decides what servicectl may run`;
    case 'internal':
      return `${message}: see the server's log`;
    default:
      return message;
  }
}
