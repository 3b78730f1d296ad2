/**
 * Room options as the commands write them: text values (`true`, `20`, `moderator,participant`) turned
 * into RoomOptions values and back. The names and text forms are mod_muc's own (`@service/mod_muc/api`),
 * so that create_room_with_opts checks every option before the room exists exactly as change_room_option
 * does on a live room; here they only become the commands' 400s, naming the argument.
 */
import { badArgument } from '@service/plugin-api';
import {
  ROOM_OPTION_NAMES,
  RoomOptionError,
  isRoomOptionName,
  parseRoomOption,
  roomOptionText,
  unknownRoomOption,
  type RoomOptionName,
  type RoomOptions,
} from '@service/mod_muc/api';

export const OPTION_NAMES: readonly RoomOptionName[] = ROOM_OPTION_NAMES;
export const optionText = roomOptionText;

/** The option named `name`, or a 400 naming the argument, with the closest known name. */
export function optionName(name: string, argument: string): RoomOptionName {
  if (isRoomOptionName(name)) return name;
  throw badArgument(argument, unknownRoomOption(name).message);
}

/** An option's value from its text; a 400 naming the argument and the option when it is not one. */
export function optionValue<K extends RoomOptionName>(name: K, text: string, argument: string): RoomOptions[K] {
  try {
    return parseRoomOption(name, text) as RoomOptions[K];
  } catch (err) {
    if (err instanceof RoomOptionError) throw badArgument(argument, err.message);
    throw err;
  }
}
