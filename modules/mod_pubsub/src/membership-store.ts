/**
 * Affiliations and subscriptions of the pubsub service's nodes (XEP-0060 §4.1, §4.2) in SQL. An
 * affiliation is kept per bare JID ('none' is the absence of a row); a subscription per subscribed JID
 * (bare or full, as the subscriber asked) with its subid.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from '@service/plugin-api';
import { AFFILIATIONS_TABLE, SUBSCRIPTIONS_TABLE } from './migrations.js';

export const AFFILIATIONS = ['owner', 'publisher', 'member', 'outcast'] as const;
export type Affiliation = (typeof AFFILIATIONS)[number];

export interface Subscription {
  readonly nodeId: number;
  readonly jid: string;
  readonly subid: string;
}

interface SubscriptionRow {
  node_id: number | string;
  jid: string;
  subid: string;
}

export class MembershipStore {
  constructor(private readonly db: Knex) {}

  async affiliation(nodeId: number, bare: string): Promise<Affiliation | undefined> {
    const row = (await this.db(AFFILIATIONS_TABLE).where({ node_id: nodeId, jid: bare }).first('affiliation')) as { affiliation: Affiliation } | undefined;
    return row?.affiliation;
  }

  async affiliations(nodeId: number): Promise<Array<{ jid: string; affiliation: Affiliation }>> {
    return this.db(AFFILIATIONS_TABLE).where({ node_id: nodeId }).orderBy('jid').select('jid', 'affiliation');
  }

  /** The affiliations of one JID across nodes, with the node ids. */
  async affiliationsOf(bare: string): Promise<Array<{ nodeId: number; affiliation: Affiliation }>> {
    const rows = (await this.db(AFFILIATIONS_TABLE).where({ jid: bare }).select('node_id', 'affiliation')) as Array<{ node_id: number | string; affiliation: Affiliation }>;
    return rows.map((r) => ({ nodeId: Number(r.node_id), affiliation: r.affiliation }));
  }

  /** Sets (or with 'none', removes) an affiliation. */
  async setAffiliation(nodeId: number, bare: string, affiliation: Affiliation | 'none'): Promise<void> {
    await this.applyAffiliations(nodeId, [{ bare, affiliation }]);
  }

  /** Sets affiliations together; an outcast loses its subscriptions to the node (XEP-0060 §8.9.2). */
  async applyAffiliations(nodeId: number, changes: ReadonlyArray<{ bare: string; affiliation: Affiliation | 'none' }>): Promise<void> {
    await this.db.transaction(async (trx) => {
      for (const { bare, affiliation } of changes) {
        await trx(AFFILIATIONS_TABLE).where({ node_id: nodeId, jid: bare }).delete();
        if (affiliation !== 'none') await trx(AFFILIATIONS_TABLE).insert({ node_id: nodeId, jid: bare, affiliation });
        if (affiliation === 'outcast') await trx(SUBSCRIPTIONS_TABLE).where({ node_id: nodeId, bare }).delete();
      }
    });
  }

  async subscriptions(nodeId: number): Promise<Subscription[]> {
    const rows = (await this.db(SUBSCRIPTIONS_TABLE).where({ node_id: nodeId }).orderBy('jid').select('node_id', 'jid', 'subid')) as SubscriptionRow[];
    return rows.map(subscriptionOf);
  }

  /** The subscriptions of an account's JIDs (bare and full) across nodes. */
  async subscriptionsOf(bare: string): Promise<Subscription[]> {
    const rows = (await this.db(SUBSCRIPTIONS_TABLE).where({ bare }).select('node_id', 'jid', 'subid')) as SubscriptionRow[];
    return rows.map(subscriptionOf);
  }

  async subscription(nodeId: number, jid: string): Promise<Subscription | undefined> {
    const row = (await this.db(SUBSCRIPTIONS_TABLE).where({ node_id: nodeId, jid }).first('node_id', 'jid', 'subid')) as SubscriptionRow | undefined;
    return row ? subscriptionOf(row) : undefined;
  }

  /** Subscribes `jid` (idempotent: an existing subscription is returned as it is). */
  async subscribe(nodeId: number, jid: string, bare: string, now: number): Promise<Subscription> {
    const existing = await this.subscription(nodeId, jid);
    if (existing) return existing;
    const subid = randomBytes(8).toString('hex');
    try {
      await this.db(SUBSCRIPTIONS_TABLE).insert({ node_id: nodeId, jid, bare, subid, created_at: now });
    } catch (err) {
      const raced = await this.subscription(nodeId, jid);
      if (raced) return raced;
      throw err;
    }
    return { nodeId, jid, subid };
  }

  async unsubscribe(nodeId: number, jid: string): Promise<boolean> {
    return (await this.db(SUBSCRIPTIONS_TABLE).where({ node_id: nodeId, jid }).delete()) > 0;
  }

  async deleteNode(nodeId: number): Promise<void> {
    await this.db(SUBSCRIPTIONS_TABLE).where({ node_id: nodeId }).delete();
    await this.db(AFFILIATIONS_TABLE).where({ node_id: nodeId }).delete();
  }

  /** Every affiliation and subscription of an account (remove_user). */
  async removeAccount(bare: string): Promise<void> {
    await this.db(SUBSCRIPTIONS_TABLE).where({ bare }).delete();
    await this.db(AFFILIATIONS_TABLE).where({ jid: bare }).delete();
  }
}

function subscriptionOf(row: SubscriptionRow): Subscription {
  return { nodeId: Number(row.node_id), jid: row.jid, subid: row.subid };
}
