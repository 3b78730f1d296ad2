/**
 * The vCards of accounts, with the rules every writer obeys (an IQ set, an admin command): a
 * <vCard xmlns='vcard-temp'/> element, no larger than `max_size` bytes once stored.
 */
import { x, type XmlElement } from '@service/plugin-api';
import type { AccountKey } from '@service/plugin-api';
import type { VcardStore } from './store.js';
import { toStoredXml } from '@service/plugin-api';

export const NS_VCARD = 'vcard-temp';

export class VcardRejected extends Error {
  constructor(
    readonly reason: 'not-a-vcard' | 'too-large',
    message: string,
  ) {
    super(message);
    this.name = 'VcardRejected';
  }
}

export function emptyVcard(): XmlElement {
  return x('vCard', { xmlns: NS_VCARD });
}

export class Vcards {
  constructor(
    private readonly store: VcardStore,
    /** Bytes of the stored text; Infinity for no limit. */
    private readonly maxSize: number,
  ) {}

  get(account: AccountKey): Promise<XmlElement | undefined> {
    return this.store.get(account);
  }

  /** Validates and stores; an empty vCard removes the stored one. Throws VcardRejected. */
  async set(account: AccountKey, vcard: XmlElement): Promise<void> {
    if (!vcard.is('vCard', NS_VCARD)) throw new VcardRejected('not-a-vcard', `expected <vCard xmlns='${NS_VCARD}'/>, got <${vcard.local}/> in ${vcard.ns ?? 'no namespace'}`);
    if (vcard.elements().length === 0 && vcard.text().trim() === '') {
      await this.store.delete(account);
      return;
    }
    const xml = toStoredXml(vcard);
    const size = Buffer.byteLength(xml);
    const limit = this.maxSize;
    if (size > limit) throw new VcardRejected('too-large', `the vCard takes ${size} bytes, the limit is ${limit}`);
    await this.store.set(account, xml);
  }

  delete(account: AccountKey): Promise<boolean> {
    return this.store.delete(account);
  }
}
