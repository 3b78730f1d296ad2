/**
 * The spam dump file (`spam_dump_file`): one line per refusal, appended, with the time (ISO 8601, UTC), the
 * sender, the recipient and the reason, separated by tabs. Created with mode 0600 (what it records is
 * private correspondence metadata). Writes are queued one after the other; a failing write is logged and
 * never affects the refusal itself.
 */
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '@service/plugin-api';

/** Tabs and line breaks in a field would break the one-line format. */
const field = (text: string) => text.replace(/[\t\r\n]+/g, ' ');

export class SpamDump {
  #queue: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly logger: Logger,
  ) {}

  record(time: Date, from: string, to: string, reason: string): void {
    const line = `${time.toISOString()}\t${field(from)}\t${field(to)}\t${field(reason)}\n`;
    this.#queue = this.#queue
      .then(async () => {
        await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
        await appendFile(this.file, line, { mode: 0o600, flag: 'a' });
      })
      .catch((err: unknown) => this.logger.error({ err, file: this.file }, 'spam dump: cannot write to %s', this.file));
  }

  /** Resolves once every line recorded so far is written (or failed). */
  flush(): Promise<void> {
    return this.#queue;
  }
}
