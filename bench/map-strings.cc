// Benchmark workload: a C++ program of std::map and std::string, the kind of
// code real programs are made of (issue 16). Each round builds a
// std::map<std::string, std::string> of ENTRIES entries whose keys and values
// are longer than the small-string buffer (so a node, a key and a value are
// three heap blocks), looks keys up through temporary strings, grows some
// values, erases a third of the entries, copies part of the map into a
// vector, and drops everything. With the defaults (-n 64000 -r 4) that is
// about 5 million allocations and frees, with 192,000 blocks live at the
// peak. Every choice comes from a seeded splitmix64, so two runs do exactly
// the same thing; it prints a checksum of what it built.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

uint64_t next(uint64_t &state)
{
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

const char *const words[] = {
	"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
	"india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
	"quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray",
};

// A key of 20 to 40 characters: a word, a number and padding.
__attribute__((noinline)) std::string make_key(uint64_t id)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "%s/%010llu/", words[id % 24],
			 (unsigned long long)(id * 2654435761u % 10000000000ull));
	std::string s(buf, (size_t)n);
	s.append(id % 17, '.');
	return s;
}

// A value of 16 to 136 characters, built up word by word (so it grows).
__attribute__((noinline)) std::string make_value(uint64_t &rng)
{
	std::string v = "value:";
	unsigned n = 2 + (unsigned)(next(rng) % 20);
	for (unsigned i = 0; i < n; i++) {
		v += words[next(rng) % 24];
		v += ' ';
	}
	return v;
}

__attribute__((noinline)) void fill(std::map<std::string, std::string> &m, uint64_t n,
				    uint64_t base, uint64_t &rng)
{
	for (uint64_t i = 0; i < n; i++)
		m.emplace(make_key(base + i), make_value(rng));
}

__attribute__((noinline)) uint64_t lookups(const std::map<std::string, std::string> &m,
					   uint64_t n, uint64_t base, uint64_t &rng)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		// Half the probes miss: ids beyond the map's.
		std::string probe = make_key(base + next(rng) % (2 * n));
		auto it = m.find(probe);
		if (it != m.end())
			sum += it->second.size();
	}
	return sum;
}

__attribute__((noinline)) void grow_values(std::map<std::string, std::string> &m, uint64_t n,
					   uint64_t base, uint64_t &rng)
{
	for (uint64_t i = 0; i < n / 2; i++) {
		auto it = m.find(make_key(base + next(rng) % n));
		if (it != m.end())
			it->second += std::string(40 + next(rng) % 80, 'g');
	}
}

__attribute__((noinline)) void erase_some(std::map<std::string, std::string> &m, uint64_t n,
					  uint64_t base)
{
	for (uint64_t i = 0; i < n; i += 3)
		m.erase(make_key(base + i));
}

__attribute__((noinline)) uint64_t copy_out(const std::map<std::string, std::string> &m)
{
	std::vector<std::string> out;
	uint64_t sum = 0, k = 0;
	for (const auto &kv : m)
		if (k++ % 4 == 0)
			out.push_back(kv.first + "=" + kv.second);
	for (const auto &s : out)
		sum += s.size();
	return sum;
}

} // namespace

int main(int argc, char **argv)
{
	uint64_t entries = 64000, rounds = 4, seed = 42, sum = 0;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-n"))
			entries = strtoull(argv[i + 1], nullptr, 10);
		else if (!strcmp(argv[i], "-r"))
			rounds = strtoull(argv[i + 1], nullptr, 10);
		else if (!strcmp(argv[i], "-s"))
			seed = strtoull(argv[i + 1], nullptr, 10);
		else {
			fprintf(stderr, "usage: map-strings [-n ENTRIES] [-r ROUNDS] [-s SEED]\n");
			return 2;
		}
	}
	uint64_t rng = seed;
	for (uint64_t r = 0; r < rounds; r++) {
		std::map<std::string, std::string> m;
		uint64_t base = r * entries;
		fill(m, entries, base, rng);
		sum += lookups(m, entries, base, rng);
		grow_values(m, entries, base, rng);
		erase_some(m, entries, base);
		sum += copy_out(m) + m.size();
	}
	char line[64];
	int n = snprintf(line, sizeof(line), "map-strings checksum %llu\n", (unsigned long long)sum);
	return write(1, line, (size_t)n) == n ? 0 : 1;
}
