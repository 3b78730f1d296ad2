/**
 * What mod_vcard offers the admin commands (get_vcard, set_vcard, the *2 and *2_multi variants,
 * set_nickname): whole vCards and fields by name and subname (see fields.ts for their meaning).
 */
import { badArgument, type XmlElement } from '@service/plugin-api';
import { accountKey } from '@service/plugin-api';
import { readField, writeField } from './fields.js';
import { VcardRejected, emptyVcard, type Vcards } from './vcards.js';

export interface VcardApi {
  /** The stored vCard, or undefined when the account has none. */
  get(user: string, host: string): Promise<XmlElement | undefined>;
  /**
   * Replaces the vCard (an empty one removes it). Throws bad_argument (argument `vcard`) for an element
   * that is not <vCard xmlns='vcard-temp'/> or is larger than the module's max_size.
   */
  set(user: string, host: string, vcard: XmlElement): Promise<void>;
  delete(user: string, host: string): Promise<boolean>;
  /** Every value of the field, in document order; [] when there is none. `subname` for N FAMILY, TEL HOME… */
  getField(user: string, host: string, name: string, subname?: string): Promise<string[]>;
  /** Makes the field hold exactly `values` (one for set_vcard/set_vcard2), keeping the rest of the vCard. */
  setField(user: string, host: string, name: string, subname: string | undefined, values: readonly string[]): Promise<void>;
}

export function vcardApi(vcards: Vcards): VcardApi {
  const set = async (user: string, host: string, vcard: XmlElement) => {
    try {
      await vcards.set(accountKey(user, host), vcard);
    } catch (err) {
      if (err instanceof VcardRejected) throw badArgument('vcard', err.message);
      throw err;
    }
  };
  return {
    get: (user, host) => vcards.get(accountKey(user, host)),
    set,
    delete: (user, host) => vcards.delete(accountKey(user, host)),
    async getField(user, host, name, subname) {
      const vcard = await vcards.get(accountKey(user, host));
      return vcard ? readField(vcard, name, subname) : [];
    },
    async setField(user, host, name, subname, values) {
      if (!name.trim()) throw badArgument('name', 'the field name is empty');
      const vcard = (await vcards.get(accountKey(user, host))) ?? emptyVcard();
      await set(user, host, writeField(vcard, name, subname || undefined, values));
    },
  };
}
