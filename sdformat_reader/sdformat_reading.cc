// libsdformat's reading of SDF files, written as JSON for tests/test_sdf_corpus.py (which then needs no libsdformat).
//
//   sdformat_reading MODEL_PATH... -- FILE...   >  reading.json
//
// For each FILE: whether libsdformat loads it (its first error otherwise) and, for every model (top-level or in a
// world; nested models flattened with scoped names "outer::inner::link"), every link's pose in the model frame, its
// mass, its inertial pose in the link frame and its moments about the centre of mass in that inertial frame, and every
// joint's type, parent, child, frame pose in the model frame and axes (unit, in the model frame), and every link's
// self_collide and collisions: name, pose in the model frame, geometry (type and dimensions, a mesh's URI and scale),
// collide_bitmask and the ODE friction mu; and the model's self_collide.  model:// URIs and
// bare model names are looked up in the MODEL_PATHs, as gz-sim does.  Poses are [x, y, z, qw, qx, qy, qz].
#include <sdf/sdf.hh>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using Pose = ignition::math::Pose3d;

static std::string quote(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); out += b; continue; }
    out += c;
  }
  return out + "\"";
}

static std::string num(double x) {
  if (!std::isfinite(x)) return x > 0 ? "1e999" : (x < 0 ? "-1e999" : "null");
  char b[40];
  std::snprintf(b, sizeof b, "%.17g", x);
  return b;
}

static std::string pose(const Pose &p) {
  return "[" + num(p.Pos().X()) + "," + num(p.Pos().Y()) + "," + num(p.Pos().Z()) + "," + num(p.Rot().W()) + "," +
         num(p.Rot().X()) + "," + num(p.Rot().Y()) + "," + num(p.Rot().Z()) + "]";
}

static std::string vec(const ignition::math::Vector3d &v) {
  return "[" + num(v.X()) + "," + num(v.Y()) + "," + num(v.Z()) + "]";
}

static const char *geometry_type(sdf::GeometryType t) {
  switch (t) {
    case sdf::GeometryType::BOX: return "box";
    case sdf::GeometryType::CAPSULE: return "capsule";
    case sdf::GeometryType::CYLINDER: return "cylinder";
    case sdf::GeometryType::ELLIPSOID: return "ellipsoid";
    case sdf::GeometryType::HEIGHTMAP: return "heightmap";
    case sdf::GeometryType::MESH: return "mesh";
    case sdf::GeometryType::PLANE: return "plane";
    case sdf::GeometryType::SPHERE: return "sphere";
    case sdf::GeometryType::EMPTY: return "empty";
    default: return "other";
  }
}

// A collision's <surface><friction><ode><mu> as written (the specification's 1 where it is not).
static double ode_mu(const sdf::Collision *c) {
  sdf::ElementPtr e = c->Element();
  for (const char *tag : {"surface", "friction", "ode", "mu"}) {
    if (!e || !e->HasElement(tag)) return 1.0;
    e = e->GetElement(tag);
  }
  return e->Get<double>();
}

static std::string collision_json(const sdf::Collision *c, const Pose &X, std::string &problem) {
  Pose p;
  auto errors = c->SemanticPose().Resolve(p, "__model__");
  if (!errors.empty() && problem.empty()) problem = errors[0].Message();
  std::ostringstream o;
  const sdf::Geometry *g = c->Geom();
  o << "{\"name\":" << quote(c->Name()) << ",\"pose\":" << pose(X * p) << ",\"type\":\""
    << (g ? geometry_type(g->Type()) : "empty") << "\",\"size\":";
  if (g && g->BoxShape()) o << vec(g->BoxShape()->Size());
  else if (g && g->SphereShape()) o << "[" << num(g->SphereShape()->Radius()) << "]";
  else if (g && g->CylinderShape()) o << "[" << num(g->CylinderShape()->Radius()) << "," << num(g->CylinderShape()->Length()) << "]";
  else if (g && g->CapsuleShape()) o << "[" << num(g->CapsuleShape()->Radius()) << "," << num(g->CapsuleShape()->Length()) << "]";
  else if (g && g->MeshShape()) o << vec(g->MeshShape()->Scale()) << ",\"uri\":" << quote(g->MeshShape()->Uri());
  else o << "[]";
  o << ",\"bitmask\":" << (c->Surface() && c->Surface()->Contact() ? c->Surface()->Contact()->CollideBitmask() : 0xffff)
    << ",\"mu\":" << num(ode_mu(c)) << "}";
  return o.str();
}

static const char *joint_type(sdf::JointType t) {
  switch (t) {
    case sdf::JointType::BALL: return "ball";
    case sdf::JointType::CONTINUOUS: return "continuous";
    case sdf::JointType::FIXED: return "fixed";
    case sdf::JointType::GEARBOX: return "gearbox";
    case sdf::JointType::PRISMATIC: return "prismatic";
    case sdf::JointType::REVOLUTE: return "revolute";
    case sdf::JointType::REVOLUTE2: return "revolute2";
    case sdf::JointType::SCREW: return "screw";
    case sdf::JointType::UNIVERSAL: return "universal";
    default: return "invalid";
  }
}

// The links and joints of model m (placed at X in the top model's frame), names prefixed by scope.
static void flatten(const sdf::Model *m, const Pose &X, const std::string &scope, std::vector<std::string> &links,
                    std::vector<std::string> &joints, std::string &problem) {
  for (uint64_t i = 0; i < m->LinkCount(); ++i) {
    const sdf::Link *l = m->LinkByIndex(i);
    Pose p;
    auto errors = l->SemanticPose().Resolve(p, "__model__");
    if (!errors.empty() && problem.empty()) problem = errors[0].Message();
    const auto &I = l->Inertial();
    const auto &moi = I.MassMatrix().Moi();
    std::ostringstream o;
    o << "{\"name\":" << quote(scope + l->Name()) << ",\"pose\":" << pose(X * p) << ",\"mass\":" << num(I.MassMatrix().Mass())
      << ",\"inertial_pose\":" << pose(I.Pose()) << ",\"moi\":[";
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) o << (r || c ? "," : "") << num(moi(r, c));
    sdf::ElementPtr le = l->Element();
    o << "],\"self_collide\":" << (le && le->HasElement("self_collide") && le->Get<bool>("self_collide") ? "true" : "false")
      << ",\"collisions\":[";
    for (uint64_t k = 0; k < l->CollisionCount(); ++k)
      o << (k ? "," : "") << collision_json(l->CollisionByIndex(k), X, problem);
    o << "]}";
    links.push_back(o.str());
  }
  for (uint64_t i = 0; i < m->JointCount(); ++i) {
    const sdf::Joint *j = m->JointByIndex(i);
    Pose p;
    auto errors = j->SemanticPose().Resolve(p, "__model__");
    if (!errors.empty() && problem.empty()) problem = errors[0].Message();
    std::ostringstream o;
    o << "{\"name\":" << quote(scope + j->Name()) << ",\"type\":\"" << joint_type(j->Type()) << "\",\"parent\":"
      << quote(j->ParentLinkName()) << ",\"child\":" << quote(j->ChildLinkName()) << ",\"pose\":" << pose(X * p)
      << ",\"axes\":[";
    for (unsigned k = 0; k < 2; ++k) {
      const sdf::JointAxis *a = j->Axis(k);
      if (!a) break;
      ignition::math::Vector3d xyz;
      auto e = a->ResolveXyz(xyz, "__model__");
      if (!e.empty() && problem.empty()) problem = e[0].Message();
      o << (k ? "," : "") << "{\"xyz\":" << vec(X.Rot() * xyz) << ",\"lower\":" << num(a->Lower())
        << ",\"upper\":" << num(a->Upper()) << "}";
    }
    o << "]}";
    joints.push_back(o.str());
  }
  for (uint64_t i = 0; i < m->ModelCount(); ++i) {
    const sdf::Model *n = m->ModelByIndex(i);
    Pose p;
    auto errors = n->SemanticPose().Resolve(p, "__model__");
    if (!errors.empty() && problem.empty()) problem = errors[0].Message();
    flatten(n, X * p, scope + n->Name() + "::", links, joints, problem);
  }
}

static std::string model_json(const sdf::Model *m) {
  std::vector<std::string> links, joints;
  std::string problem;
  flatten(m, Pose::Zero, "", links, joints, problem);
  std::ostringstream o;
  o << "{\"name\":" << quote(m->Name()) << ",\"static\":" << (m->Static() ? "true" : "false")
    << ",\"self_collide\":" << (m->SelfCollide() ? "true" : "false") << ",\"problem\":"
    << quote(problem) << ",\"links\":[";
  for (size_t i = 0; i < links.size(); ++i) o << (i ? "," : "") << links[i];
  o << "],\"joints\":[";
  for (size_t i = 0; i < joints.size(); ++i) o << (i ? "," : "") << joints[i];
  o << "]}";
  return o.str();
}

int main(int argc, char **argv) {
  std::vector<std::string> paths, files;
  bool after = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") after = true;
    else (after ? files : paths).push_back(a);
  }
  sdf::Console::Instance()->SetQuiet(true);
  std::cout << "{\n";
  for (size_t f = 0; f < files.size(); ++f) {
    sdf::ParserConfig config;
    config.SetFindCallback([&](const std::string &uri) -> std::string {
      const std::string prefix = "model://";  // model://name/..., or a bare name/... (gz-sim looks both up)
      std::string rest = uri.rfind(prefix, 0) == 0 ? uri.substr(prefix.size()) : uri;
      if (rest.find("://") != std::string::npos) return "";  // other schemes (https://fuel...): not downloaded
      for (const auto &p : paths) {
        std::filesystem::path candidate = std::filesystem::path(p) / rest;
        if (std::filesystem::exists(candidate)) return candidate.string();
      }
      return "";
    });
    sdf::Root root;
    sdf::Errors errors = root.Load(files[f], config);
    std::cout << quote(files[f]) << ":{\"errors\":[";
    for (size_t e = 0; e < errors.size() && e < 3; ++e) std::cout << (e ? "," : "") << quote(errors[e].Message());
    std::cout << "],\"models\":[";
    bool first = true;
    if (root.Model()) {
      std::cout << model_json(root.Model());
      first = false;
    }
    for (uint64_t w = 0; w < root.WorldCount(); ++w)
      for (uint64_t m = 0; m < root.WorldByIndex(w)->ModelCount(); ++m) {
        std::cout << (first ? "" : ",") << model_json(root.WorldByIndex(w)->ModelByIndex(m));
        first = false;
      }
    std::cout << "]}" << (f + 1 < files.size() ? "," : "") << "\n";
  }
  std::cout << "}\n";
  return 0;
}
