/**
 * saxes' parser, kept in V8's fast-properties mode whatever handlers are set on it.
 *
 * saxes stores each handler under a computed key (`this[handlerName] = handler` in `on()`), and V8 turns an
 * object into a dictionary once keyed stores have added more than a few properties after construction: a
 * parser with seven handlers or more (the stream parser sets eight) had every `this.i`, `this.chunk`,
 * `this.column` of saxes' per-character loop become a hash-table lookup, and parsed 4–5× slower (a client's
 * login: 99 µs of saxes instead of 22). This parser declares every handler slot by name when it is built, so
 * that `on()` only replaces a value. test/unit/saxes-parser.test.ts holds the mode with V8's own check.
 */
import { SaxesParser, type SaxesOptions } from 'saxes';

/** saxes 6's handler properties, one per event (its EVENT_NAME_TO_HANDLER_NAME). */
interface HandlerSlots {
  xmldeclHandler: undefined;
  textHandler: undefined;
  piHandler: undefined;
  doctypeHandler: undefined;
  commentHandler: undefined;
  openTagStartHandler: undefined;
  attributeHandler: undefined;
  openTagHandler: undefined;
  closeTagHandler: undefined;
  cdataHandler: undefined;
  errorHandler: undefined;
  endHandler: undefined;
  readyHandler: undefined;
}

export class FastSaxesParser<O extends SaxesOptions = object> extends SaxesParser<O> {
  constructor(options?: O) {
    super(options);
    // Named stores, in one order for every parser: one hidden class, with room for every handler. saxes
    // tests `textHandler !== undefined` and calls the others with `?.`: undefined is as good as absent.
    const slots = this as unknown as HandlerSlots;
    slots.xmldeclHandler = undefined;
    slots.textHandler = undefined;
    slots.piHandler = undefined;
    slots.doctypeHandler = undefined;
    slots.commentHandler = undefined;
    slots.openTagStartHandler = undefined;
    slots.attributeHandler = undefined;
    slots.openTagHandler = undefined;
    slots.closeTagHandler = undefined;
    slots.cdataHandler = undefined;
    slots.errorHandler = undefined;
    slots.endHandler = undefined;
    slots.readyHandler = undefined;
  }
}
