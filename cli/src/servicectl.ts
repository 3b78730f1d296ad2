#!/usr/bin/env node
/**
 * servicectl: the operator's tool. This first version runs the server in the foreground; running
 * commands on a running server over the control socket comes next.
 */
import { ConfigError, ModuleError, Server } from '@service/kernel';

const USAGE = 'usage: servicectl [--config FILE] foreground';

function parseArgs(argv: string[]): { config: string; command: string | undefined } {
  let config = process.env.SERVICE_CONFIG ?? 'service.yml';
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--config') config = argv[++i] ?? fail('--config needs a file');
    else if (arg.startsWith('--config=')) config = arg.slice('--config='.length);
    else rest.push(arg);
  }
  return { config, command: rest[0] };
}

function fail(message: string, status = 64): never {
  process.stderr.write(`servicectl: ${message}\n`);
  process.exit(status);
}

async function foreground(configFile: string): Promise<void> {
  let server: Server;
  try {
    server = await Server.start({ configFile, pretty: process.stdout.isTTY, onExit: (status) => process.exit(status) });
  } catch (err) {
    if (err instanceof ConfigError || err instanceof ModuleError) fail(err.message, 78);
    fail(`cannot start: ${(err as Error).message}`, 1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      process.stderr.write(`servicectl: ${signal} again, exiting now\n`);
      process.exit(130);
    }
    stopping = true;
    server.logger.notice({ signal }, 'received %s, stopping', signal);
    server.shutdown().then(
      () => process.exit(0),
      (err: unknown) => {
        server.logger.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A bug in one request's async path must not take the server down: log it loudly and keep serving.
  process.on('unhandledRejection', (err) => server.logger.error({ err }, 'unhandled promise rejection'));
}

const { config, command } = parseArgs(process.argv.slice(2));
switch (command) {
  case 'foreground':
    await foreground(config);
    break;
  case undefined:
    fail(USAGE);
    break;
  default:
    fail(`unknown command '${command}': this version of servicectl only runs the server (${USAGE})`);
}
