/**
 * Log commands that are always present: get_loglevel, set_loglevel, rotate_log, reopen_log.
 */
import { badArgument, failed } from '@service/plugin-api';
import { defineCommand, type HandlersFor } from '@service/plugin-api';
import { LOG_LEVELS, type LogLevel } from '../log/logger.js';
import type { WorkersControl } from '../workers/control.js';
import type { LogService } from '../log/log-service.js';

export const logCommands = [
  defineCommand({
    name: 'get_loglevel',
    tags: ['logs'],
    desc: 'Get the current loglevel',
    args: [],
    result: { name: 'levelatom', type: 'string', desc: 'One of none, emergency, alert, critical, error, warning, notice, info, debug' },
    examples: [{ args: {}, result: 'info' }],
  }),
  defineCommand({
    name: 'set_loglevel',
    tags: ['logs'],
    desc: 'Set the loglevel',
    longdesc: 'Takes effect at once, without a restart, until the next reload_config or restart applies the configured `loglevel` again.',
    args: [{ name: 'loglevel', type: 'string', desc: `Desired loglevel: ${LOG_LEVELS.join(', ')}`, example: 'debug' }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { loglevel: 'debug' }, result: 0 }],
  }),
  defineCommand({
    name: 'rotate_log',
    tags: ['logs'],
    desc: 'Rotate the log files',
    longdesc:
      'Renames the log file to `<log_file>.1` (older ones shift up to `log_rotate_count`) and starts a new file. Fails (422) when the server writes no log file.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
  defineCommand({
    name: 'reopen_log',
    tags: ['logs'],
    desc: 'Reopen the log files after being renamed',
    longdesc:
      'For external rotation (logrotate): after the file was moved away, new lines go to a new file of the configured name. Fails (422) when the server writes no log file.',
    args: [],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: {}, result: 0 }],
  }),
] as const;

export function logHandlers(logs: () => LogService, workers: WorkersControl): HandlersFor<typeof logCommands> {
  const fileOp = async (op: () => Promise<void> | void) => {
    try {
      await op();
    } catch (err) {
      throw failed((err as Error).message);
    }
  };
  return {
    get_loglevel: () => logs().level,
    set_loglevel: ({ loglevel }) => {
      if (!(LOG_LEVELS as readonly string[]).includes(loglevel)) {
        throw badArgument('loglevel', `unknown log level '${loglevel}': expected one of ${LOG_LEVELS.join(', ')}`);
      }
      logs().setLevel(loglevel as LogLevel);
      workers.everyWorker({ op: 'loglevel', level: loglevel as LogLevel });
      logs().logger.notice({ loglevel }, 'log level set to %s', loglevel);
    },
    rotate_log: () =>
      fileOp(() => {
        if (!workers.identity) return logs().rotate();
        if (!logs().file) throw new Error('the server writes no log file (log_file is empty)');
        workers.rotateLog();
      }),
    reopen_log: () =>
      fileOp(() => {
        logs().reopen();
        workers.everyWorker({ op: 'reopen-log' });
      }),
  };
}
