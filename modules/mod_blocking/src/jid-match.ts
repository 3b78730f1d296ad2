/**
 * Whether a JID is covered by a set of blocked JIDs, by XEP-0191 §6 (the rules of XEP-0016 §2.1):
 * user@domain/resource matches only itself; user@domain any of its resources; domain/resource only
 * itself; domain the domain, anything at it, and its subdomains.
 */
import type { Jid } from '@service/plugin-api';

export function isCovered(blocked: ReadonlySet<string>, candidate: Jid): boolean {
  if (blocked.size === 0) return false;
  if (blocked.has(candidate.full) || blocked.has(candidate.bare)) return true;
  return domainsOf(candidate.host).some((domain) => blocked.has(domain));
}

/** The domain and every parent domain: a.b.example → a.b.example, b.example, example. */
function domainsOf(host: string): string[] {
  const labels = host.split('.');
  return labels.map((_, i) => labels.slice(i).join('.'));
}
