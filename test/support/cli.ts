/**
 * Runs servicectl as a real process, the way an operator types it.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { CONTROL_SOCKET } from '@service/kernel';
import { ControlClient } from '../../cli/src/client.js';
import { SERVICECTL } from './process.js';
import type { TestServer } from './server.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function servicectl(configFile: string, ...args: string[]): Promise<CliResult> {
  return run(process.execPath, [SERVICECTL, '--config', configFile, ...args]);
}

/** servicectl under a pseudo-terminal (util-linux `script`), to see what a person at a terminal sees. */
export function servicectlOnTty(configFile: string, ...args: string[]): Promise<CliResult> {
  const command = [process.execPath, SERVICECTL, '--config', configFile, ...args].map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  return run('script', ['-qec', command, '/dev/null']);
}

function run(file: string, args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 60_000, env: { ...process.env, SERVICE_CONFIG: '' } }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

export interface ProgressFrame {
  readonly done: number;
  readonly total?: number;
  readonly label?: string;
}

/** Runs a command as servicectl does, through the server's control socket: its progress frames and its final frame. */
export async function overControlSocket(t: TestServer, command: string, argv: string[] = []) {
  const control = await ControlClient.connect(join(t.dir, 'data', CONTROL_SOCKET));
  const progress: ProgressFrame[] = [];
  try {
    const final = await control.request({ op: 'call', command, argv }, { progress: (done, total, label) => progress.push({ done, total, label }) });
    return { progress, final: final as { type: string; result?: unknown; message?: string; kind?: string; resultType?: string } };
  } finally {
    control.close();
  }
}
