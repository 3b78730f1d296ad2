/**
 * The server's failed-login limit, as a module sees it (`services.logins`). Every way in (XMPP, HTTP Basic,
 * XML-RPC, OAuth) reports its failed logins to one counter in the kernel; the kernel itself only guards one
 * account at one address. Banning a whole address (ejabberd's mod_fail2ban) is a module's policy: the module
 * sets the limit while it runs (setAddressBans), lifts bans (unbanAddresses) and lists them (addressBans), and never
 * touches the counters themselves.
 *
 * Address ranges are plain records (an address and a prefix length), so that an unban can travel to the other
 * worker processes and nodes as data; parseAddressRange and addressInRange are the one place they are read.
 */
import { BlockList, isIP } from 'node:net';

/** How many failed logins ban an address, and for how long. */
export interface AddressBanSettings {
  /** Failed logins from one address, to any accounts, within `banSeconds`, that ban it. */
  readonly maxFailures: number;
  /** Seconds a ban lasts, and the span failures are counted over. */
  readonly banSeconds: number;
}

/** A network: `address` with its first `prefixLength` bits significant (32 or 128 for one address). */
export interface AddressRange {
  readonly family: 'ipv4' | 'ipv6';
  readonly address: string;
  readonly prefixLength: number;
}

/** An address that is banned now. */
export interface AddressBan {
  readonly address: string;
  /** Seconds until the ban ends. */
  readonly secondsLeft: number;
}

export interface LoginLimitsApi {
  /**
   * Bans addresses after `settings.maxFailures` failed logins (undefined: no address is banned for failed
   * logins on any account, only an account at an address). One module sets this; the last call wins.
   */
  setAddressBans(settings: AddressBanSettings | undefined): void;
  /**
   * Lifts the bans and failure counts of the addresses in `range` (and of accounts at them) here and in the
   * other worker processes of this node; returns how many addresses had failures counted or a ban here. (Across nodes, a cluster module carries it.)
   */
  unbanAddresses(range: AddressRange): number;
  /** The addresses banned now, soonest freed first. */
  addressBans(): AddressBan[];
  /**
   * Calls `listener` with each address ban that failed logins counted in this process start (not those
   * another process or node reported), so that a cluster module's carrier tells the other nodes once.
   * Returns what stops it.
   */
  onAddressBanned(listener: (ban: AddressBan) => void): () => void;
  /** Bans an address another node banned, here and in this node's other workers (a longer ban stays). */
  imposeAddressBan(ban: AddressBan): void;
}

/**
 * Reads `192.0.2.7`, `192.0.2.0/24`, `2001:db8::1` or `2001:db8::/32` (an IPv4 address written as IPv6,
 * `::ffff:192.0.2.7`, is its IPv4 address); undefined when malformed. Host bits under the mask are allowed.
 */
export function parseAddressRange(text: string): AddressRange | undefined {
  const slash = text.indexOf('/');
  const written = slash < 0 ? text : text.slice(0, slash);
  const address = unmapped(written);
  const version = isIP(address);
  if (version === 0) return undefined;
  const family = version === 4 ? 'ipv4' : 'ipv6';
  const bits = version === 4 ? 32 : 128;
  if (slash < 0) return { family, address, prefixLength: bits };
  const prefix = text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > 128) return undefined;
  // A mask on an IPv4 address written as IPv6 counts its 96 leading bits (::ffff:0:0/96 is all of IPv4).
  const prefixLength = address === written ? Number(prefix) : Number(prefix) - 96;
  if (prefixLength < 0 || prefixLength > bits) return undefined;
  return { family, address, prefixLength };
}

/** Whether the peer address `ip` (as a socket reports it) is in `range`. */
export function addressInRange(ip: string, range: AddressRange): boolean {
  const address = unmapped(ip);
  const version = isIP(address);
  if (version === 0 || (version === 4) !== (range.family === 'ipv4')) return false;
  const list = new BlockList();
  list.addSubnet(range.address, range.prefixLength, range.family);
  return list.check(address, range.family);
}

/** `::ffff:a.b.c.d` (an IPv4 peer on a dual-stack socket) as `a.b.c.d`. */
function unmapped(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  return mapped ? mapped[1]! : ip;
}
