/**
 * Whether a 'jid' item covers an address (XEP-0016 §2.1): user@domain/resource only itself,
 * user@domain any of its resources, domain/resource only itself, domain the domain, anything at it and
 * its subdomains.
 */
import type { Jid } from '@service/plugin-api';

export function covers(pattern: Jid, candidate: Jid): boolean {
  if (pattern.resource !== undefined) return candidate.full === pattern.full;
  if (pattern.user !== undefined) return candidate.bare === pattern.bare;
  return candidate.host === pattern.host || candidate.host.endsWith(`.${pattern.host}`);
}
