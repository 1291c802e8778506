// weir_config_reference — writes the key tables of docs/configuration.md from the schema and
// the reference rows (config_reference.hpp), between their markers, leaving the rest of the page
// as it is. With --check it writes nothing and exits 1 when the page differs from what it would
// write. `scripts/dev config-reference` runs it on the repository's page.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "apps/config/config_reference.hpp"

int main(int argc, char** argv) {
  bool check = argc == 3 && std::string{argv[1]} == "--check";
  if (argc != 2 && !check) {
    std::cerr << "usage: weir_config_reference [--check] docs/configuration.md\n";
    return 2;
  }
  const std::string path = argv[argc - 1];
  std::ifstream in(path);
  if (!in) {
    std::cerr << "weir_config_reference: cannot read " << path << "\n";
    return 2;
  }
  std::stringstream page;
  page << in.rdbuf();
  in.close();
  auto written = weir::config::regenerate_reference(page.str());
  if (!written) {
    std::cerr << "weir_config_reference: " << path << ": " << written.error().message << "\n";
    return 2;
  }
  if (*written == page.str()) {
    return 0;
  }
  if (check) {
    std::cerr << "weir_config_reference: " << path
              << " differs from the schema's reference: run scripts/dev config-reference\n";
    return 1;
  }
  std::ofstream out(path, std::ios::trunc);
  out << *written;
  if (!out) {
    std::cerr << "weir_config_reference: cannot write " << path << "\n";
    return 2;
  }
  std::cout << "weir_config_reference: wrote " << path << "\n";
  return 0;
}
