/**
 * mod_vcard's part of XEP-0227 exports and imports: an account's vCard as `<vCard xmlns='vcard-temp'>`
 * (XEP-0054), stored as it comes, within the module's max_size.
 */
import { PortabilityError, accountKey, toStoredXml, type AccountPortability, type XmlElement } from '@service/plugin-api';
import type { VcardStore } from './store.js';
import { NS_VCARD } from './vcards.js';

function single(elements: readonly XmlElement[]): XmlElement | undefined {
  if (elements.length > 1) throw new PortabilityError(`vcard: the account has ${elements.length} <vCard/> elements, at most one is allowed`);
  return elements[0];
}

export function vcardPortability(store: VcardStore, maxSize: () => number): AccountPortability {
  const check = (vcard: XmlElement) => {
    const size = Buffer.byteLength(toStoredXml(vcard));
    if (size > maxSize()) throw new PortabilityError(`vcard: the vCard takes ${size} bytes, the limit (mod_vcard max_size) is ${maxSize()}`);
  };
  return {
    kind: 'vcard',
    claims: [{ name: 'vCard', ns: NS_VCARD }],
    async exportAccount(user, host) {
      const vcard = await store.get(accountKey(user, host));
      return vcard ? [vcard] : [];
    },
    checkAccount(_user, _host, elements) {
      const vcard = single(elements);
      if (vcard) check(vcard);
    },
    async importAccount(user, host, elements) {
      const vcard = single(elements);
      if (!vcard || (vcard.elements().length === 0 && vcard.text().trim() === '')) return 0;
      check(vcard);
      await store.set(accountKey(user, host), toStoredXml(vcard));
      return 1;
    },
  };
}
