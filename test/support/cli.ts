/**
 * Runs servicectl as a real process, the way an operator types it.
 */
import { execFile } from 'node:child_process';
import { SERVICECTL } from './process.js';

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
