/**
 * IP addresses and networks for ACL `ip` rules, on Node's native `net.BlockList`.
 */
import { BlockList, isIP } from 'node:net';

/** Unwraps IPv4-mapped IPv6 (`::ffff:127.0.0.1`), as a dual-stack listener reports IPv4 peers. */
export function normalizeIp(address: string): string {
  const lower = address.toLowerCase();
  if (lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4) return lower.slice(7);
  return lower;
}

const VERDICT_CACHE_SIZE = 4096;

export interface IpNetwork {
  readonly text: string;
  matches(ip: string): boolean;
}

/** Parses `a.b.c.d`, `a.b.c.d/n`, `::1`, `fe80::/10`; a missing mask means the single address. */
export function parseIpNetwork(text: string): IpNetwork {
  const [address = '', maskText, extra] = text.trim().split('/');
  const family = isIP(address);
  if (!family || extra !== undefined) throw new Error(`'${text}' is not an IP address or network (like 127.0.0.0/8 or ::1/128)`);
  const bits = family === 4 ? 32 : 128;
  const mask = maskText === undefined ? bits : Number(maskText);
  if (!Number.isInteger(mask) || mask < 0 || mask > bits || (maskText !== undefined && !/^\d+$/.test(maskText))) {
    throw new Error(`'${text}' has an invalid mask: expected 0 to ${bits}`);
  }
  const list = new BlockList();
  const type = family === 4 ? 'ipv4' : 'ipv6';
  list.addSubnet(address, mask, type);
  // BlockList.check allocates on every call; callers come from few addresses, so remember verdicts.
  const verdicts = new Map<string, boolean>();
  return {
    text,
    matches(ip: string) {
      let verdict = verdicts.get(ip);
      if (verdict === undefined) {
        const fam = isIP(ip);
        verdict = fam !== 0 && list.check(ip, fam === 4 ? 'ipv4' : 'ipv6');
        if (verdicts.size >= VERDICT_CACHE_SIZE) verdicts.clear();
        verdicts.set(ip, verdict);
      }
      return verdict;
    },
  };
}
