/** Private XML storage in SQL: one element per account and namespace. */
import type { ModuleContext, XmlElement } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import { PRIVATE_TABLE } from './migrations.js';
import { fromStoredXml, retryingTransaction, toStoredXml } from '@service/plugin-api';

type Db = ModuleContext['db'];

interface PrivateRow {
  host: string;
  username: string;
  namespace: string;
  xml: string;
  updated_at: number;
}

export class PrivateStore {
  constructor(private readonly db: Db) {}

  async get(account: AccountKey, namespace: string): Promise<XmlElement | undefined> {
    const row: Pick<PrivateRow, 'xml'> | undefined = await this.db(PRIVATE_TABLE)
      .first('xml')
      .where({ host: account.host, username: account.user, namespace });
    return row ? fromStoredXml(row.xml) : undefined;
  }

  /** Stores each element under its namespace, replacing what was there; all or nothing. */
  async set(account: AccountKey, elements: readonly XmlElement[]): Promise<void> {
    const now = Date.now();
    const rows: PrivateRow[] = elements.map((element) => ({
      host: account.host,
      username: account.user,
      namespace: element.ns!,
      xml: toStoredXml(element),
      updated_at: now,
    }));
    await retryingTransaction(this.db, async (trx) => {
      for (const row of rows) {
        await trx(PRIVATE_TABLE).insert(row).onConflict(['host', 'username', 'namespace']).merge(['xml', 'updated_at']);
      }
    });
  }

  async delete(account: AccountKey, namespace: string): Promise<boolean> {
    const deleted = await this.db(PRIVATE_TABLE).where({ host: account.host, username: account.user, namespace }).delete();
    return deleted > 0;
  }

  /** The accounts holding an element of `namespace`. */
  async accountsWith(namespace: string): Promise<AccountKey[]> {
    const rows: Array<Pick<PrivateRow, 'host' | 'username'>> = await this.db(PRIVATE_TABLE).select('host', 'username').where({ namespace });
    return rows.map((r) => ({ user: r.username, host: r.host }));
  }

  async namespaces(account: AccountKey): Promise<string[]> {
    const rows: Array<Pick<PrivateRow, 'namespace'>> = await this.db(PRIVATE_TABLE)
      .select('namespace')
      .where({ host: account.host, username: account.user })
      .orderBy('namespace');
    return rows.map((r) => r.namespace);
  }

  async deleteAccount(account: AccountKey): Promise<void> {
    await this.db(PRIVATE_TABLE).where({ host: account.host, username: account.user }).delete();
  }
}
