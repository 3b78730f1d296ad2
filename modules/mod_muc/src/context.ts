/**
 * What every MUC handler is given: the service settings (from the module's options), the store, the way
 * out for stanzas, the access decisions (who may create rooms, who administers the service), and the room
 * archive when a module provides one. One
 * object, built by the module's start, so that handlers depend on nothing else of the server.
 */
import type { Logger, StanzaError, XmlElement } from '@service/plugin-api';
import type { MucStore } from './store.js';
import type { MucArchiveApi, RoomOptions } from './types.js';

export interface MucSettings {
  /** The conference services (conference.localhost…), in configuration order. */
  readonly services: readonly string[];
  /** The virtual host a service belongs to (whose access rules apply). */
  hostOf(service: string): string;
  readonly historySize: number;
  readonly maxUsers: number;
  readonly maxRoomsDiscoItems: number;
  /** How many rooms one account may be an occupant of at once (Infinity: no limit). */
  readonly maxUserConferences: number;
  readonly defaultRoomOptions: Readonly<RoomOptions>;
}

export interface MucEnv {
  readonly settings: MucSettings;
  readonly store: MucStore;
  readonly logger: Logger;
  /** Routes a stanza from the service (its `from` is a room or occupant JID). */
  send(stanza: XmlElement): Promise<void>;
  /** One stanza to many sessions (full JIDs), a copy each with its `to`: a groupchat message to the occupants. */
  sendEach(stanza: XmlElement, recipients: readonly string[]): Promise<void>;
  /** Answers a stanza with an error (never for an error or result). */
  bounce(stanza: XmlElement, error: StanzaError): Promise<void>;
  /** Service administrators are owners of every room (access_admin, or the server's admin ACL). */
  isServiceAdmin(bare: string, host: string): boolean;
  mayCreate(bare: string, host: string): boolean;
  mayMakePersistent(bare: string, host: string): boolean;
  /** The room archive (mucArchiveService) while a module provides it; undefined without one (read it at each use). */
  archive(): MucArchiveApi | undefined;
  now(): number;
}
