/**
 * The XEP-0227 contributions of the running modules (their `portability` registrations), by owner, so that
 * an export or import asks every module that stores account data, and a module that stops is no longer
 * asked. One registry per server (`KernelServices.portability`): the module manager fills it, the PIEFXIS
 * commands read it.
 */
import type { AccountPortability, HostPortability, XmlElement } from '@service/plugin-api';

interface Entry {
  readonly owner: string;
  /** A per-host instance's host: it contributes for that host only. */
  readonly host?: string;
  readonly contribution: AccountPortability;
}

interface HostEntry {
  readonly owner: string;
  readonly host?: string;
  readonly contribution: HostPortability;
}

export class PortabilityRegistry {
  #entries: Entry[] = [];
  #hostEntries: HostEntry[] = [];

  register(contributions: readonly AccountPortability[], owner: string, host?: string): void {
    for (const contribution of contributions) this.#entries.push({ owner, ...(host ? { host } : {}), contribution });
  }

  registerHostLevel(contributions: readonly HostPortability[], owner: string, host?: string): void {
    for (const contribution of contributions) this.#hostEntries.push({ owner, ...(host ? { host } : {}), contribution });
  }

  removeOwner(owner: string): void {
    this.#entries = this.#entries.filter((e) => e.owner !== owner);
    this.#hostEntries = this.#hostEntries.filter((e) => e.owner !== owner);
  }

  /** The host-level contributions for a host. */
  hostLevel(host: string): Array<{ owner: string; contribution: HostPortability }> {
    return this.#hostEntries.filter((e) => e.host === undefined || e.host === host).map(({ owner, contribution }) => ({ owner, contribution }));
  }

  /** The host-level contribution that claims a child of `<host>`, if a running module does. */
  hostClaimOf(host: string, element: XmlElement): { owner: string; contribution: HostPortability } | undefined {
    return this.hostLevel(host).find(({ contribution }) => contribution.claims.some((c) => element.is(c.name, c.ns)));
  }

  /** The contributions for a host, in the order their modules started. */
  forHost(host: string): Array<{ owner: string; contribution: AccountPortability }> {
    return this.#entries.filter((e) => e.host === undefined || e.host === host).map(({ owner, contribution }) => ({ owner, contribution }));
  }

  /** The contribution that claims an element of `<user>` on a host, if a running module does. */
  claimOf(host: string, element: XmlElement): { owner: string; contribution: AccountPortability } | undefined {
    return this.forHost(host).find(({ contribution }) => contribution.claims.some((c) => element.is(c.name, c.ns)));
  }
}
