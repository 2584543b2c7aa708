function daysUntilWarmer(temperatures) {
  const waits = new Array(temperatures.length).fill(0);
  const pending = [];
  temperatures.forEach((temperature, day) => {
    while (pending.length && temperatures[pending[pending.length - 1]] < temperature) {
      const earlier = pending.pop();
      waits[earlier] = day - earlier;
    }
    pending.push(day);
  });
  return waits;
}
