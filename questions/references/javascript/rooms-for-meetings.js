function roomsNeeded(meetings) {
  // Starts and ends sorted apart: a room frees up whenever the earliest end is at or before a start.
  const starts = meetings.map((meeting) => meeting[0]).sort((a, b) => a - b);
  const ends = meetings.map((meeting) => meeting[1]).sort((a, b) => a - b);
  let rooms = 0;
  let ended = 0;
  for (const start of starts) {
    if (ends[ended] <= start) ended++;
    else rooms++;
  }
  return rooms;
}
