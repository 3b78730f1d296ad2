/**
 * The shared roster rows in SQL (see migrations.ts). The in-memory groups are loaded from here at start,
 * and every change is written here first, in one transaction, before memory follows.
 */
import { insertRows, preparedRead, retryingTransaction, type Knex } from '@service/plugin-api';
import type { DisplayedRef, Group, GroupRef } from './groups.js';
import { DISPLAYED_TABLE, GROUPS_TABLE, MEMBERS_TABLE } from './migrations.js';

interface GroupRow {
  host: string;
  name: string;
  label: string;
  description: string;
  all_users: unknown;
  online_users: unknown;
}

interface DisplayedRow {
  host: string;
  name: string;
  displayed_host: string;
  displayed_name: string;
  position: number | string;
}

interface MemberRow {
  host: string;
  name: string;
  user_host: string;
  username: string;
}

/** Booleans come back as true/false (PostgreSQL) or 1/0 (SQLite, MariaDB). */
function bool(value: unknown): boolean {
  return value === true || value === 1 || value === '1';
}

function key(ref: GroupRef): { host: string; name: string } {
  return { host: ref.host, name: ref.name };
}

function splitBare(bare: string): { user_host: string; username: string } {
  const at = bare.lastIndexOf('@');
  return { username: bare.slice(0, at), user_host: bare.slice(at + 1) };
}

/** Whether a vhost has an @all@ group, asked at each registration on it: compiled once (see preparedRead). */
const ALL_USERS_GROUP = preparedRead<'host', { name: string }>((db, p) => db(GROUPS_TABLE).where({ host: p('host'), all_users: true }).first('name'));

export class SharedRosterStore {
  constructor(private readonly db: Knex) {}

  /** Every group of every vhost, with its displayed list and members. */
  async load(): Promise<Group[]> {
    const groups = new Map<string, Group>();
    const id = (host: string, name: string) => `${name}\u0000${host}`;
    for (const row of (await this.db(GROUPS_TABLE).select('*')) as GroupRow[]) {
      groups.set(id(row.host, row.name), {
        host: row.host,
        name: row.name,
        label: row.label,
        description: row.description,
        allUsers: bool(row.all_users),
        onlineUsers: bool(row.online_users),
        displayed: [],
        members: new Set(),
      });
    }
    for (const row of (await this.db(DISPLAYED_TABLE).select('*').orderBy('position')) as DisplayedRow[]) {
      groups.get(id(row.host, row.name))?.displayed.push({ host: row.displayed_host, name: row.displayed_name, position: Number(row.position) });
    }
    for (const row of (await this.db(MEMBERS_TABLE).select('*')) as MemberRow[]) {
      groups.get(id(row.host, row.name))?.members.add(`${row.username}@${row.user_host}`);
    }
    return [...groups.values()];
  }

  /** Whether a group of `host` stands for all its accounts (@all@), as stored now (not as this process last read it). */
  async hasAllUsersGroups(host: string): Promise<boolean> {
    return (await ALL_USERS_GROUP.first(this.db, { host })) !== undefined;
  }

  async insertGroup(group: Group): Promise<void> {
    await retryingTransaction(this.db, async (trx) => {
      await trx(GROUPS_TABLE).insert({
        ...key(group),
        label: group.label,
        description: group.description,
        all_users: group.allUsers,
        online_users: group.onlineUsers,
      });
      // srg_create may display any number of groups.
      await insertRows(trx, DISPLAYED_TABLE, group.displayed.map((d) => displayedRow(group, d)));
    });
  }

  /** The group, its lists, its memberships, and its place in the lists of the groups that displayed it. */
  async deleteGroup(group: GroupRef): Promise<void> {
    await retryingTransaction(this.db, async (trx) => {
      await trx(MEMBERS_TABLE).where(key(group)).delete();
      await trx(DISPLAYED_TABLE).where(key(group)).delete();
      await trx(DISPLAYED_TABLE).where({ displayed_host: group.host, displayed_name: group.name }).delete();
      await trx(GROUPS_TABLE).where(key(group)).delete();
    });
  }

  async updateGroup(group: GroupRef, fields: { label?: string; description?: string; all_users?: boolean; online_users?: boolean }): Promise<void> {
    await this.db(GROUPS_TABLE).where(key(group)).update(fields);
  }

  async addDisplayed(group: GroupRef, shown: DisplayedRef): Promise<void> {
    await this.db(DISPLAYED_TABLE).insert(displayedRow(group, shown));
  }

  async removeDisplayed(group: GroupRef, shown: GroupRef): Promise<void> {
    await this.db(DISPLAYED_TABLE).where({ ...key(group), displayed_host: shown.host, displayed_name: shown.name }).delete();
  }

  async addMember(group: GroupRef, bare: string): Promise<void> {
    await this.db(MEMBERS_TABLE).insert({ ...key(group), ...splitBare(bare) });
  }

  async removeMember(group: GroupRef, bare: string): Promise<void> {
    await this.db(MEMBERS_TABLE).where({ ...key(group), ...splitBare(bare) }).delete();
  }

  /** An account's memberships, in every group (remove_user). */
  async deleteAccount(bare: string): Promise<void> {
    await this.db(MEMBERS_TABLE).where(splitBare(bare)).delete();
  }
}

function displayedRow(group: GroupRef, shown: DisplayedRef): DisplayedRow {
  return { ...key(group), displayed_host: shown.host, displayed_name: shown.name, position: shown.position };
}
