/** disco#info answers (XEP-0030 §3) built from the kernel's registry of what modules announce. */
import { x, type DiscoIdentity, type XmlElement } from '@service/plugin-api';
import { NS_DISCO_INFO } from './ns.js';

export function infoQuery(identities: readonly DiscoIdentity[], features: readonly string[]): XmlElement {
  return x(
    'query',
    { xmlns: NS_DISCO_INFO },
    ...identities.map((identity) => x('identity', { category: identity.category, type: identity.type, name: identity.name })),
    ...features.map((feature) => x('feature', { var: feature })),
  );
}
