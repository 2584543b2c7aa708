function compressRuns(text) {
  const parts = [];
  let start = 0;
  for (let index = 1; index <= text.length; index++) {
    if (index === text.length || text[index] !== text[start]) {
      const length = index - start;
      parts.push(text[start] + (length > 1 ? String(length) : ""));
      start = index;
    }
  }
  return parts.join("");
}
