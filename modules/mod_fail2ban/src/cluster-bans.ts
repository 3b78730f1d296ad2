/**
 * Carries mod_fail2ban's bans and unbans to the other nodes of a cluster. The workers of one node already
 * share every count and ban through the kernel's worker link; between nodes, the existing path is NodesApi's
 * channel calls (mod_cluster's Redis inbox streams), so this sends over it: each address ban that this
 * process starts goes to every other live node, and unban_ip runs on every node. Without a cluster module
 * there are no other nodes and nothing travels.
 */
import type { AddressBan, ChannelRegistration, ChannelValue, LoginLimitsApi, Logger, NodesApi } from '@service/plugin-api';
import { parseAddressRange } from '@service/plugin-api';

/** Channel names, prefixed with the module's. */
export const BAN_CHANNEL = 'mod_fail2ban:ban';
export const UNBAN_CHANNEL = 'mod_fail2ban:unban';

export class ClusterBans {
  readonly #stopListening: () => void;

  constructor(
    private readonly logins: LoginLimitsApi,
    private readonly nodes: NodesApi,
    private readonly logger: Logger,
  ) {
    this.#stopListening = logins.onAddressBanned((ban) => void this.#announce(ban));
  }

  /** What the other nodes call: a ban one of them started, an unban_ip run there. */
  channels(): ChannelRegistration[] {
    return [
      { name: BAN_CHANNEL, handler: (payload) => this.#imposeFrom(payload) },
      { name: UNBAN_CHANNEL, handler: (payload) => this.#unbanFrom(payload) },
    ];
  }

  /**
   * Lifts the bans of `address` (already read as valid) on the other live nodes; resolves with the largest
   * count one of them removed (the nodes hold the same bans, so their counts are not added up). A node that
   * cannot be reached is logged and left out.
   */
  async unbanElsewhere(address: string): Promise<number> {
    let removed = 0;
    for (const node of this.#otherNodes()) {
      try {
        const answer = await this.nodes.call(node, UNBAN_CHANNEL, address);
        if (typeof answer === 'number') removed = Math.max(removed, answer);
      } catch (err) {
        this.logger.warn({ node, address, err }, 'unban_ip: node %s was not reached; its bans of %s stay', node, address);
      }
    }
    return removed;
  }

  stop(): void {
    this.#stopListening();
  }

  async #announce(ban: AddressBan): Promise<void> {
    const payload: ChannelValue = { address: ban.address, secondsLeft: ban.secondsLeft };
    await Promise.all(
      this.#otherNodes().map((node) =>
        this.nodes.call(node, BAN_CHANNEL, payload).catch((err: unknown) => {
          this.logger.warn({ node, ip: ban.address, err }, 'login ban of %s not carried to node %s', ban.address, node);
        }),
      ),
    );
  }

  #imposeFrom(payload: ChannelValue): ChannelValue {
    const ban = banOf(payload);
    if (!ban) return false;
    this.logins.imposeAddressBan(ban);
    this.logger.info({ ip: ban.address, seconds: ban.secondsLeft }, 'login ban: %s may not log in for %d seconds (banned on another node)', ban.address, ban.secondsLeft);
    return true;
  }

  #unbanFrom(payload: ChannelValue): ChannelValue {
    const range = typeof payload === 'string' ? parseAddressRange(payload) : undefined;
    return range ? this.logins.unbanAddresses(range) : 0;
  }

  #otherNodes(): string[] {
    if (!this.nodes.clustered()) return [];
    return this.nodes.live().filter((node) => node !== this.nodes.self);
  }
}

/** A ban as the ban channel carries it, or undefined when the payload is not one. */
function banOf(payload: ChannelValue): AddressBan | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  const { address, secondsLeft } = payload as { readonly [key: string]: ChannelValue };
  if (typeof address !== 'string' || typeof secondsLeft !== 'number' || !(secondsLeft > 0)) return undefined;
  return { address, secondsLeft };
}
