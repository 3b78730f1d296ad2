/**
 * mod_fail2ban's command, declared as data: `unban_ip`, with ejabberd's name, argument and result (an integer,
 * negative when the address cannot be read), so that scripts written for ejabberd call it unchanged.
 */
import { defineCommand } from '@service/plugin-api';

/** What unban_ip answers for an address (or mask) it cannot read, as ejabberd's does. */
export const MALFORMED_ADDRESS = -1;

export const fail2banCommands = [
  defineCommand({
    name: 'unban_ip',
    tags: ['accounts'],
    desc: 'Remove banned IP addresses from the fail2ban table',
    longdesc:
      'Lifts the bans and failed-login counts of an address, or of every address in a network when `address` has a mask ' +
      '(`192.0.2.0/24`, `2001:db8::/32`), on every way in (XMPP, HTTP Basic, XML-RPC, OAuth), in every worker and, with mod_cluster, on every node. ' +
      'Counts of one account at those addresses start again too. Returns how many addresses had failed logins counted or a ban ' +
      `(as ejabberd counts the entries it removes), or ${MALFORMED_ADDRESS} when \`address\` is not an IPv4 or IPv6 address with an optional mask.`,
    note: 'count of unbanned entries; negative on error',
    args: [{ name: 'address', type: 'string', desc: 'IP address, optional network mask' }],
    result: { name: 'unbanned', type: 'integer' },
    examples: [
      { args: { address: '::FFFF:127.0.0.1/128' }, result: 3 },
      { args: { address: '192.0.2.0/24' }, result: 1 },
    ],
  }),
] as const;
