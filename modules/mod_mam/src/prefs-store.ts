/**
 * Each account's archiving preferences (XEP-0313 §6) in SQL: the default and the always/never lists. An
 * account without a row follows the module's `default` option.
 */
import type { AccountKey, ModuleContext } from '@service/plugin-api';
import { MAM_PREFS_TABLE } from './migrations.js';

type Db = ModuleContext['db'];

export type DefaultMode = 'always' | 'roster' | 'never';
export const DEFAULT_MODES: readonly DefaultMode[] = ['always', 'roster', 'never'];

export interface Prefs {
  readonly default: DefaultMode;
  /** JIDs (bare or full, as the client gave them, prepared) always / never archived. */
  readonly always: readonly string[];
  readonly never: readonly string[];
}

export class PrefsStore {
  constructor(private readonly db: Db) {}

  /** The stored preferences, or undefined when the account never set any. */
  async get(owner: AccountKey): Promise<Prefs | undefined> {
    const row: { default_mode: string; always_jids: string; never_jids: string } | undefined = await this.db(MAM_PREFS_TABLE)
      .where({ host: owner.host, username: owner.user })
      .first('default_mode', 'always_jids', 'never_jids');
    if (!row) return undefined;
    return {
      default: DEFAULT_MODES.includes(row.default_mode as DefaultMode) ? (row.default_mode as DefaultMode) : 'always',
      always: jsonList(row.always_jids),
      never: jsonList(row.never_jids),
    };
  }

  async set(owner: AccountKey, prefs: Prefs): Promise<void> {
    await this.db(MAM_PREFS_TABLE)
      .insert({ host: owner.host, username: owner.user, default_mode: prefs.default, always_jids: JSON.stringify(prefs.always), never_jids: JSON.stringify(prefs.never) })
      .onConflict(['host', 'username'])
      .merge();
  }

  async delete(owner: AccountKey): Promise<number> {
    return this.db(MAM_PREFS_TABLE).where({ host: owner.host, username: owner.user }).delete();
  }
}

function jsonList(text: string): string[] {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
