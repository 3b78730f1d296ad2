/** vCards in SQL, one per account. */
import type { ModuleContext, XmlElement } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import { VCARD_TABLE } from './migrations.js';
import { fromStoredXml } from '@service/plugin-api';

type Db = ModuleContext['db'];

export class VcardStore {
  constructor(private readonly db: Db) {}

  async get(account: AccountKey): Promise<XmlElement | undefined> {
    const row: { xml: string } | undefined = await this.db(VCARD_TABLE).first('xml').where({ host: account.host, username: account.user });
    return row ? fromStoredXml(row.xml) : undefined;
  }

  /** Stores the vCard's text (already made self-contained by the caller, who measured it). */
  async set(account: AccountKey, xml: string): Promise<void> {
    await this.db(VCARD_TABLE)
      .insert({ host: account.host, username: account.user, xml, updated_at: Date.now() })
      .onConflict(['host', 'username'])
      .merge(['xml', 'updated_at']);
  }

  async delete(account: AccountKey): Promise<boolean> {
    return (await this.db(VCARD_TABLE).where({ host: account.host, username: account.user }).delete()) > 0;
  }
}
