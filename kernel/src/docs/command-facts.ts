/**
 * The phrases every rendering of a command shares (help text, markdown, HTML, man), so that a command
 * reads the same whichever form the operator looks at.
 */
import { describeType } from '../commands/coerce.js';
import type { CommandDecl, ResultDecl } from '@service/plugin-api';
import type { CommandDoc } from '@service/plugin-api';

/** `v1`, `v2`…: version markers of revised commands, not subjects, so they are not listed as topics. */
const VERSION_TAG = /^v\d+$/;

export function isVersionTag(tag: string): boolean {
  return VERSION_TAG.test(tag);
}

/** The tags a command is filed under (its version markers left out). */
export function topicTags(decl: CommandDecl): string[] {
  return decl.tags.filter((tag) => !isVersionTag(tag));
}

/** Every tag that files at least one command, sorted. */
export function allTopicTags(docs: readonly CommandDoc[]): string[] {
  return [...new Set(docs.flatMap((doc) => topicTags(doc.decl)))].sort();
}

/** The result's type as the spec words it: ST and RS are spelled out. */
export function describeResultType(result: ResultDecl): string {
  if (result.type === 'rescode') return 'integer: 0 on success, 1 otherwise';
  if (result.type === 'restuple') return 'string: a text';
  return describeType(result.type);
}

/** Where a command comes from and whether it can be called now. */
export function describeProvider(doc: CommandDoc, showState = true): string {
  if (doc.module === 'kernel') return 'kernel (always present)';
  if (!showState) return doc.module;
  return doc.loaded ? `${doc.module} (enabled)` : `${doc.module} (not enabled: add it under \`modules\` in the configuration)`;
}

/** "0, 2" for a command with definitions at versions 0 and 2; undefined when there is only one. */
export function describeVersions(doc: CommandDoc): string | undefined {
  if (!doc.older.length) return undefined;
  const versions = [...doc.older, doc.decl].map((decl) => decl.version ?? 0);
  return `${versions.join(', ')} (this describes version ${doc.decl.version ?? 0}; call /api/vN/${doc.decl.name} for version N)`;
}

export const CLI_ONLY_TEXT = 'command-line only: servicectl runs it; the HTTP API and XML-RPC refuse it';

/** A description that more text follows: ends with a full stop. */
export function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
