/**
 * The verification string and hash of entity capabilities (XEP-0115 §5.1): from a disco#info answer,
 * identities, features and extended forms in their sorted order, hashed with the algorithm the client
 * named. A ver that does not match what the client answered is not believed (XEP-0115 §5.4: it could
 * poison every other client's cache entry).
 */
import { createHash } from 'node:crypto';
import type { XmlElement } from '@service/plugin-api';
import { NS_DATA } from './ns.js';

/** XEP-0115 names hashes as the IANA registry does; node's crypto names them its own way. */
const HASHES: Readonly<Record<string, string>> = {
  'sha-1': 'sha1',
  'sha-224': 'sha224',
  'sha-256': 'sha256',
  'sha-384': 'sha384',
  'sha-512': 'sha512',
};

export function supportedHash(name: string): boolean {
  return name in HASHES;
}

const byOctets = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

/** The verification string of a disco#info <query/> (XEP-0115 §5.1 steps 1-8); undefined if malformed. */
export function verificationString(query: XmlElement): string | undefined {
  const identities = query.getChildren('identity').map((i) => `${i.attr('category') ?? ''}/${i.attr('type') ?? ''}/${i.attr('xml:lang') ?? ''}/${i.attr('name') ?? ''}`);
  const features = query.getChildren('feature').map((f) => f.attr('var') ?? '');
  // §5.4 3.b/3.c: duplicated identities or features make the answer unverifiable.
  if (new Set(identities).size !== identities.length || new Set(features).size !== features.length) return undefined;
  let s = identities.sort(byOctets).map((i) => `${i}<`).join('') + features.sort(byOctets).map((f) => `${f}<`).join('');
  const forms: Array<{ type: string; text: string }> = [];
  for (const form of query.getChildren('x', NS_DATA)) {
    const fields = form.getChildren('field');
    const formType = fields.find((f) => f.attr('var') === 'FORM_TYPE');
    if (!formType) continue;
    if (formType.attr('type') !== 'hidden' && formType.attr('type') !== undefined) return undefined;
    const type = formType.getChildText('value') ?? '';
    const rest = fields
      .filter((f) => f.attr('var') !== 'FORM_TYPE')
      .map((f) => ({ name: f.attr('var') ?? '', values: f.getChildren('value').map((v) => v.text()).sort(byOctets) }))
      .sort((a, b) => byOctets(a.name, b.name));
    forms.push({ type, text: `${type}<` + rest.map((f) => `${f.name}<` + f.values.map((v) => `${v}<`).join('')).join('') });
  }
  if (new Set(forms.map((f) => f.type)).size !== forms.length) return undefined;
  s += forms.sort((a, b) => byOctets(a.type, b.type)).map((f) => f.text).join('');
  return s;
}

/** Whether `ver` is the `hash` of this disco#info answer. */
export function verifies(query: XmlElement, hash: string, ver: string): boolean {
  const algorithm = HASHES[hash];
  const s = verificationString(query);
  if (!algorithm || s === undefined) return false;
  return createHash(algorithm).update(s, 'utf8').digest('base64') === ver;
}
