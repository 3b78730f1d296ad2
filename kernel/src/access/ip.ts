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
  return {
    text,
    matches(ip: string) {
      const fam = isIP(ip);
      if (!fam) return false;
      return list.check(ip, fam === 4 ? 'ipv4' : 'ipv6');
    },
  };
}
