function canCompleteAll(courseCount, prerequisites) {
  const unlocks = Array.from({ length: courseCount }, () => []);
  const waitingOn = new Array(courseCount).fill(0);
  for (const [course, needed] of prerequisites) {
    unlocks[needed].push(course);
    waitingOn[course]++;
  }
  const ready = [];
  for (let course = 0; course < courseCount; course++) if (waitingOn[course] === 0) ready.push(course);
  // `ready` is a queue read from its front: the index moves instead of shift()ing.
  for (let head = 0; head < ready.length; head++) {
    for (const next of unlocks[ready[head]]) {
      if (--waitingOn[next] === 0) ready.push(next);
    }
  }
  return ready.length === courseCount;
}
