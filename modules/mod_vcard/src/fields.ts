/**
 * vCard fields by name and subname, as the admin commands address them (get_vcard/set_vcard: FN,
 * NICKNAME, BDAY…; get_vcard2/set_vcard2 and the _multi variants: N FAMILY, ADR CTRY, TEL HOME, EMAIL
 * USERID, ORG ORGNAME…).
 *
 * A subname is either a child holding a value (N/FAMILY, ADR/CTRY, EMAIL/USERID, ORG/ORGNAME) or, for TEL
 * and EMAIL, one of the empty type flags of XEP-0054 (<TEL><HOME/><NUMBER>…</NUMBER></TEL>): then the
 * value is the entry's NUMBER (TEL) or USERID (EMAIL), so what the commands write is what clients read.
 *
 * A field may hold several values. Where they go follows XEP-0054's DTD, pair by pair:
 * - Most children occur at most once in an entry, and the field repeats as entries (several TEL HOME
 *   entries, several EMAILs each with one USERID): reading returns the child of every entry, in document
 *   order; writing fills successive entries.
 * - ORGUNIT, KEYWORD and LINE repeat inside one entry (ORG (ORGNAME, ORGUNIT*), CATEGORIES (KEYWORD+),
 *   LABEL (…, LINE+)): they are read from and written into the first entry, as ejabberd does, so that the
 *   units of an organization stay in the ORG that names it rather than in new ORGs without an ORGNAME.
 * Writing replaces exactly the values read, keeping the rest of the vCard; children are placed in the
 * DTD's order, and an ORG always has its ORGNAME (empty when there is no name), as the DTD requires.
 */
import { x, type XmlElement } from '@service/plugin-api';

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

/** The children of a structured field in XEP-0054's DTD. */
interface Structure {
  /** The children in the DTD's order. */
  readonly order: readonly string[];
  /** The child that may occur several times in one entry. */
  readonly repeated?: string;
  /** A child every entry must have; written empty when the entry has no value for it. */
  readonly required?: string;
}

const ADDRESS_FLAGS = ['HOME', 'WORK', 'POSTAL', 'PARCEL', 'DOM', 'INTL', 'PREF'];
const MEDIA = ['TYPE', 'BINVAL', 'EXTVAL'];

const STRUCTURES: Readonly<Record<string, Structure>> = {
  N: { order: ['FAMILY', 'GIVEN', 'MIDDLE', 'PREFIX', 'SUFFIX'] },
  ADR: { order: [...ADDRESS_FLAGS, 'POBOX', 'EXTADD', 'STREET', 'LOCALITY', 'REGION', 'PCODE', 'CTRY'] },
  LABEL: { order: [...ADDRESS_FLAGS, 'LINE'], repeated: 'LINE' },
  TEL: { order: [...TYPED_ENTRIES.TEL!.flags, 'NUMBER'] },
  EMAIL: { order: [...TYPED_ENTRIES.EMAIL!.flags, 'USERID'] },
  GEO: { order: ['LAT', 'LON'] },
  PHOTO: { order: MEDIA },
  LOGO: { order: MEDIA },
  ORG: { order: ['ORGNAME', 'ORGUNIT'], repeated: 'ORGUNIT', required: 'ORGNAME' },
  CATEGORIES: { order: ['KEYWORD'], repeated: 'KEYWORD' },
  SOUND: { order: ['PHONETIC', 'BINVAL', 'EXTVAL'] },
  KEY: { order: ['TYPE', 'CRED'] },
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

/**
 * The text of the entry's `name` child; undefined when it has none or it is empty. An empty child holds no
 * value: it is what stands for a required child without one (an ORG's ORGNAME), and the commands never
 * write an empty value.
 */
function valueOf(entry: XmlElement, name: string): string | undefined {
  const text = childNamed(entry, name)?.text();
  return text === '' ? undefined : text;
}

function typedFlag(name: string, subname: string): TypedEntry | undefined {
  const typed = TYPED_ENTRIES[name];
  return typed?.flags.has(subname) ? typed : undefined;
}

function repeatsInEntry(name: string, subname: string): boolean {
  return STRUCTURES[name]?.repeated === subname;
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
  if (repeatsInEntry(name, subname)) {
    const first = entries[0];
    return first ? first.elements().filter((c) => named(c, subname)).map((c) => c.text()).filter((text) => text !== '') : [];
  }
  return entries.flatMap((e) => {
    const value = valueOf(e, subname);
    return value === undefined ? [] : [value];
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
  else if (repeatsInEntry(name, subname)) writeRepeated(result, name, subname, values);
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

/** N FAMILY, ADR CTRY, ORG ORGNAME…: the child of successive entries, filling entries without a value first. */
function writeChild(vcard: XmlElement, name: string, subname: string, values: readonly string[]): void {
  const entries = vcard.elements().filter((e) => named(e, name));
  const holding = entries.filter((e) => valueOf(e, subname) !== undefined);
  const candidates = [...holding, ...entries.filter((e) => valueOf(e, subname) === undefined)];
  values.forEach((value, i) => {
    const entry = candidates[i];
    if (entry) setChildText(entry, subname, value);
    else vcard.append(x(name, {}, x(subname, {}, value)));
  });
  for (const entry of holding.slice(values.length)) {
    entry.removeChildren((c) => named(c, subname));
    settle(vcard, entry);
  }
}

/** ORG ORGUNIT, CATEGORIES KEYWORD, LABEL LINE: all the values inside the first entry, replacing its own. */
function writeRepeated(vcard: XmlElement, name: string, subname: string, values: readonly string[]): void {
  let entry = vcard.elements().find((e) => named(e, name));
  if (!entry) {
    if (values.length === 0) return;
    entry = x(name);
    vcard.append(entry);
  }
  entry.removeChildren((c) => named(c, subname));
  for (const value of values) insertInOrder(entry, x(subname, {}, value));
  settle(vcard, entry);
}

function setChildText(entry: XmlElement, childName: string, value: string): void {
  const child = childNamed(entry, childName);
  if (child) child.children = [value];
  else insertInOrder(entry, x(childName, {}, value));
}

/**
 * Adds `child` before the first child the DTD puts after it (else at the end): a client validating the
 * vCard against XEP-0054 must find an ORG's ORGNAME before its units. Children the DTD does not know
 * (extensions) are not moved.
 */
function insertInOrder(entry: XmlElement, child: XmlElement): void {
  const order = STRUCTURES[fieldName(entry.local)]?.order ?? [];
  const rank = order.indexOf(fieldName(child.local));
  const before = rank === -1 ? -1 : entry.children.findIndex((c) => typeof c !== 'string' && order.indexOf(fieldName(c.local)) > rank);
  child.ns ??= entry.ns;
  if (before === -1) entry.children.push(child);
  else entry.children.splice(before, 0, child);
}

/**
 * After a write took children out of `entry`: an entry with no value left (nothing, or only type flags
 * and empty children) goes, since it would tell clients nothing; one that keeps values gets the child the
 * DTD requires (an ORG keeping units but losing its name keeps an empty ORGNAME).
 */
function settle(vcard: XmlElement, entry: XmlElement): void {
  const holdsNothing = entry.text().trim() === '' && entry.elements().every((c) => c.elements().length === 0 && c.text().trim() === '');
  if (holdsNothing) {
    vcard.removeChildren((c) => c === entry);
    return;
  }
  const required = STRUCTURES[fieldName(entry.local)]?.required;
  if (required && !childNamed(entry, required)) insertInOrder(entry, x(required));
}
