/**
 * Stream features that modules add to what an authenticated client is offered (stream management, roster
 * versioning, client state indication…). The server itself offers STARTTLS, SASL, bind and session.
 */
import type { XmlElement } from '../xml/element.js';

export interface FeatureContext {
  /** The authenticated account's domain. */
  readonly host: string;
  readonly secure: boolean;
}

export interface StreamFeatureRegistration {
  /** The feature element to offer, or undefined to offer nothing on this stream. */
  build(ctx: FeatureContext): XmlElement | undefined;
}
