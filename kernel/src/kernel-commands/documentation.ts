/**
 * Documentation commands (man, gen_markdown_doc_for_commands, gen_markdown_doc_for_tags,
 * gen_html_doc_for_commands): generated from the command declarations.
 */
import type { HandlersFor } from '../commands/types.js';
import type { KernelServices } from '../modules/services.js';

export const documentationCommands = [] as const;

export function documentationHandlers(_services: KernelServices): HandlersFor<typeof documentationCommands> {
  return {};
}
