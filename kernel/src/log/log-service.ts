/**
 * The server's log: JSON lines to a file under the data directory, and in the foreground also to stdout
 * (pretty on a terminal). The level changes at runtime (set_loglevel); the file can be rotated by the
 * server (rotate_log, or automatically past log_rotate_size) or reopened after an external rotation
 * (reopen_log, for logrotate).
 */
import { rename, stat } from 'node:fs/promises';
import { pino, type DestinationStream, type StreamEntry } from 'pino';
import type { SonicBoom } from 'sonic-boom';
import { createLogger, prettyStream, setLogLevel, type Logger, type LogLevel } from './logger.js';

export interface LogSettings {
  readonly level: LogLevel;
  /** Absolute path of the log file; undefined for none. */
  readonly file?: string;
  /** Also write to stdout (foreground). */
  readonly stdout: boolean;
  /** Pretty stdout (a terminal). */
  readonly pretty: boolean;
  /** Rotated files kept: service.log.1 … service.log.N. */
  readonly rotateCount: number;
  /** Rotate when the file grows past this many bytes (Infinity: never by size). */
  readonly rotateSize: number;
  /** Under workers: which process writes (a field of every line). */
  readonly worker?: number;
}

const SIZE_CHECK_MS = 10_000;

export class LogService {
  readonly logger: Logger;
  #level: LogLevel;
  #settings: LogSettings;
  readonly #file?: SonicBoom;
  #timer?: NodeJS.Timeout;
  #rotating?: Promise<void>;

  /** Wraps a logger made elsewhere (tests): no file, so rotation is refused. */
  static external(logger: Logger, level: LogLevel): LogService {
    return new LogService({ level, stdout: false, pretty: false, rotateCount: 1, rotateSize: Infinity }, logger);
  }

  constructor(settings: LogSettings, external?: Logger) {
    this.#settings = settings;
    this.#level = settings.level;
    if (external) {
      this.logger = external;
      setLogLevel(this.logger, settings.level);
      return;
    }
    const streams: StreamEntry[] = [];
    if (settings.file) {
      this.#file = pino.destination({ dest: settings.file, sync: false, mkdir: true, append: true, mode: 0o600 }) as unknown as SonicBoom;
      streams.push({ level: 'trace', stream: this.#file as unknown as DestinationStream });
    }
    if (settings.stdout) {
      const out = settings.pretty ? prettyStream() : pino.destination({ dest: 1, sync: false });
      streams.push({ level: 'trace', stream: out });
    }
    const destination = pino.multistream(streams, { levels: { ...pino.levels.values, notice: 35 } });
    this.logger = createLogger({ level: settings.level, destination, ...(settings.worker ? { base: { worker: settings.worker } } : {}) });
    this.#scheduleSizeCheck();
  }

  get level(): LogLevel {
    return this.#level;
  }

  get file(): string | undefined {
    return this.#settings.file;
  }

  setLevel(level: LogLevel): void {
    this.#level = level;
    setLogLevel(this.logger, level);
  }

  /** Applies reloaded settings that do not need a new file (level, rotation limits). */
  configure(settings: Pick<LogSettings, 'level' | 'rotateCount' | 'rotateSize'>): void {
    this.#settings = { ...this.#settings, ...settings };
    this.setLevel(settings.level);
    this.#scheduleSizeCheck();
  }

  /** Renames the file to .1 (shifting older ones up to log_rotate_count) and starts a new one. */
  rotate(): Promise<void> {
    this.#rotating ??= this.#rotate().finally(() => (this.#rotating = undefined));
    return this.#rotating;
  }

  async #rotate(): Promise<void> {
    const file = this.#requireFile();
    const { rotateCount } = this.#settings;
    flushNow(this.#file!);
    for (let i = rotateCount - 1; i >= 1; i--) await rename(`${file}.${i}`, `${file}.${i + 1}`).catch(ignoreMissing);
    await rename(file, `${file}.1`).catch(ignoreMissing);
    this.#file!.reopen();
    this.logger.notice({ file }, 'log file rotated');
  }

  /** Opens the file again by name: after logrotate moved it, new lines go to a new file. */
  reopen(): void {
    this.#requireFile();
    this.#file!.reopen();
    this.logger.notice({ file: this.#settings.file }, 'log file reopened');
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    const file = this.#file;
    if (!file) return;
    await new Promise<void>((resolve) => {
      file.once('close', () => resolve());
      file.once('error', () => resolve());
      flushNow(file);
      file.end();
    });
  }

  #requireFile(): string {
    if (!this.#settings.file || !this.#file) throw new Error('this server writes no log file (log_file is empty)');
    return this.#settings.file;
  }

  #scheduleSizeCheck(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#file || !Number.isFinite(this.#settings.rotateSize)) return;
    this.#timer = setInterval(() => {
      stat(this.#settings.file!)
        .then((s) => (s.size > this.#settings.rotateSize ? this.rotate() : undefined))
        .catch(() => {});
    }, SIZE_CHECK_MS);
    this.#timer.unref();
  }
}

function ignoreMissing(err: NodeJS.ErrnoException): void {
  if (err.code !== 'ENOENT') throw err;
}

/** Writes what is buffered now (rotation and shutdown are rare; the async flush may never call back). */
function flushNow(stream: SonicBoom): void {
  try {
    stream.flushSync();
  } catch {
    // Not open yet, or nothing to write.
  }
}
