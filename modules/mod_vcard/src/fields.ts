/**
 * vCard fields by name and subname, as the admin commands address them (get_vcard/set_vcard: FN,
 * NICKNAME, BDAY…; get_vcard2/set_vcard2 and the _multi variants: N FAMILY, ADR CTRY, TEL HOME, EMAIL
 * USERID, ORG ORGNAME…).
 *
 * A subname is either a child holding a value (N/FAMILY, ADR/CTRY, EMAIL/USERID, ORG/ORGNAME) or, for TEL
 * and EMAIL, one of the empty type flags of XEP-0054 (<TEL><HOME/><NUMBER>…</NUMBER></TEL>): then the
 * value is the entry's NUMBER (TEL) or USERID (EMAIL), so what the commands write is what clients read.
 *
 * A field may hold several values (several TEL HOME entries, several EMAIL USERIDs): reading returns them
 * all, in document order; writing replaces them all, keeping the rest of the vCard.
 */
import { x, type XmlElement } from '@service/kernel';

interface TypedEntry {
  readonly flags: ReadonlySet<string>;
  /** The child that holds the entry's value. */
  readonly value: string;
}

const TYPED_ENTRIES: Readonly<Record<string, TypedEntry>> = {
  TEL: {
    flags: new Set(['HOME', 'WORK', 'VOICE', 'FAX', 'PAGER', 'MSG', 'CELL', 'VIDEO', 'BBS', 'MODEM', 'ISDN', 'PCS', 'PREF']),
    value: 'NUMBER',
  },
  EMAIL: { flags: new Set(['HOME', 'WORK', 'INTERNET', 'PREF', 'X400']), value: 'USERID' },
};

export function fieldName(name: string): string {
  return name.trim().toUpperCase();
}

function named(element: XmlElement, name: string): boolean {
  return element.local.toUpperCase() === name;
}

function childNamed(element: XmlElement, name: string): XmlElement | undefined {
  return element.elements().find((child) => named(child, name));
}

function typedFlag(name: string, subname: string): TypedEntry | undefined {
  const typed = TYPED_ENTRIES[name];
  return typed?.flags.has(subname) ? typed : undefined;
}

/** The values of a field; an empty list when the vCard has none. */
export function readField(vcard: XmlElement, rawName: string, rawSubname?: string): string[] {
  const name = fieldName(rawName);
  const entries = vcard.elements().filter((e) => named(e, name));
  if (!rawSubname) return entries.map((e) => e.text());
  const subname = fieldName(rawSubname);
  const typed = typedFlag(name, subname);
  if (typed) {
    return entries
      .filter((e) => childNamed(e, subname))
      // Some writers put the value in the flag itself (<TEL><HOME>…</HOME></TEL>): read that too.
      .map((e) => childNamed(e, typed.value)?.text() ?? childNamed(e, subname)!.text());
  }
  return entries.flatMap((e) => {
    const child = childNamed(e, subname);
    return child ? [child.text()] : [];
  });
}

/** A copy of the vCard whose field holds exactly `values`; no values removes the field. */
export function writeField(vcard: XmlElement, rawName: string, rawSubname: string | undefined, values: readonly string[]): XmlElement {
  const name = fieldName(rawName);
  const result = vcard.clone();
  if (!rawSubname) {
    replaceEntries(result, name, values.map((value) => x(name, {}, value)));
    return result;
  }
  const subname = fieldName(rawSubname);
  const typed = typedFlag(name, subname);
  if (typed) writeTyped(result, name, subname, typed, values);
  else writeChild(result, name, subname, values);
  return result;
}

/** Replaces every `name` entry with `replacements`, where the first one stood (else at the end). */
function replaceEntries(vcard: XmlElement, name: string, replacements: XmlElement[]): void {
  const at = vcard.children.findIndex((c) => typeof c !== 'string' && named(c, name));
  vcard.removeChildren((c) => named(c, name));
  const insertAt = at === -1 ? vcard.children.length : Math.min(at, vcard.children.length);
  for (const element of replacements) element.ns ??= vcard.ns;
  vcard.children.splice(insertAt, 0, ...replacements);
}

/** TEL HOME, EMAIL INTERNET…: one entry per value, carrying the flag and the value child. */
function writeTyped(vcard: XmlElement, name: string, flag: string, typed: TypedEntry, values: readonly string[]): void {
  const slots = vcard.elements().filter((e) => named(e, name) && childNamed(e, flag));
  values.forEach((value, i) => {
    const slot = slots[i];
    if (slot) setChildText(slot, typed.value, value);
    else vcard.append(x(name, {}, x(flag), x(typed.value, {}, value)));
  });
  const extra = new Set(slots.slice(values.length));
  vcard.removeChildren((c) => extra.has(c));
}

/** N FAMILY, ADR CTRY, ORG ORGNAME…: the child of successive entries, filling entries that lack it first. */
function writeChild(vcard: XmlElement, name: string, subname: string, values: readonly string[]): void {
  const entries = vcard.elements().filter((e) => named(e, name));
  const holding = entries.filter((e) => childNamed(e, subname));
  const candidates = [...holding, ...entries.filter((e) => !childNamed(e, subname))];
  values.forEach((value, i) => {
    const entry = candidates[i];
    if (entry) setChildText(entry, subname, value);
    else vcard.append(x(name, {}, x(subname, {}, value)));
  });
  for (const entry of holding.slice(values.length)) {
    entry.removeChildren((c) => named(c, subname));
    if (entry.elements().length === 0 && entry.text().trim() === '') vcard.removeChildren((c) => c === entry);
  }
}

function setChildText(entry: XmlElement, childName: string, value: string): void {
  const child = childNamed(entry, childName);
  if (child) child.children = [value];
  else entry.append(x(childName, {}, value));
}
