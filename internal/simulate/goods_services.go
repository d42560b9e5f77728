package simulate

// restaurants that delivery apps order from, with a few dishes each.
type restaurant struct {
	name   string
	dishes []good
}

var restaurants = []restaurant{
	{"Thai Basil Kitchen", []good{
		{"Pad Thai with Chicken", 1495, 1695, 2, taxed, "Rice noodles, egg, bean sprouts, peanuts"},
		{"Green Curry with Tofu", 1395, 1595, 1, taxed, "Medium spicy"},
		{"Crispy Spring Rolls (4)", 695, 795, 1, taxed, ""},
		{"Thai Iced Tea", 495, 595, 2, taxed, ""},
	}},
	{"Sakura Sushi & Ramen", []good{
		{"Tonkotsu Ramen", 1595, 1795, 2, taxed, "Pork broth, chashu, soft egg"},
		{"Spicy Tuna Roll", 895, 1095, 2, taxed, ""},
		{"California Roll", 795, 895, 1, taxed, ""},
		{"Edamame", 495, 595, 1, taxed, "Sea salt"},
	}},
	{"Bella Napoli Pizzeria", []good{
		{"Large Margherita Pizza", 1895, 2195, 1, taxed, ""},
		{"Large Pepperoni Pizza", 1995, 2295, 2, taxed, ""},
		{"Garlic Knots (6)", 595, 695, 1, taxed, ""},
		{"Caesar Salad", 995, 1195, 1, taxed, ""},
	}},
	{"El Camino Taqueria", []good{
		{"Carne Asada Burrito", 1195, 1395, 2, taxed, "Rice, beans, salsa, guacamole"},
		{"Al Pastor Tacos (3)", 1095, 1295, 2, taxed, ""},
		{"Chips & Guacamole", 595, 795, 1, taxed, ""},
		{"Horchata, Large", 395, 495, 2, taxed, ""},
	}},
	{"Shake Shack", []good{
		{"ShackBurger", 799, 899, 2, taxed, ""},
		{"Chicken Shack", 849, 949, 1, taxed, ""},
		{"Crinkle Cut Fries", 449, 549, 2, taxed, ""},
		{"Vanilla Shake", 649, 749, 1, taxed, ""},
	}},
	{"Mumbai Spice House", []good{
		{"Chicken Tikka Masala", 1695, 1895, 1, taxed, "With basmati rice"},
		{"Garlic Naan", 395, 495, 2, taxed, ""},
		{"Vegetable Samosas (2)", 695, 795, 1, taxed, ""},
		{"Mango Lassi", 495, 595, 1, taxed, ""},
	}},
	{"Sweetgreen", []good{
		{"Harvest Bowl", 1395, 1495, 1, taxed, ""},
		{"Kale Caesar", 1195, 1295, 1, taxed, ""},
		{"Chicken Pesto Parm", 1495, 1595, 1, taxed, ""},
	}},
	{"Golden Dragon", []good{
		{"General Tso's Chicken", 1395, 1595, 1, taxed, "With white rice"},
		{"Beef & Broccoli", 1495, 1695, 1, taxed, ""},
		{"Vegetable Lo Mein", 1195, 1295, 1, taxed, ""},
		{"Pork Dumplings (8)", 895, 1095, 1, taxed, ""},
	}},
}

// menus of restaurant chains that sell directly, by merchant domain.
var chainMenus = map[string][]good{
	"dominos.com": {
		{"Large Hand Tossed Pepperoni Pizza", 1599, 1899, 2, taxed, ""},
		{"Medium ExtravaganZZa Feast Pizza", 1699, 1999, 1, taxed, ""},
		{"Large Thin Crust Veggie Pizza", 1599, 1899, 1, taxed, ""},
		{"Boneless Chicken, 8 pc", 999, 1099, 1, taxed, "Honey BBQ"},
		{"Parmesan Bread Bites", 699, 799, 1, taxed, ""},
		{"Cinnamon Bread Twists", 699, 799, 1, taxed, ""},
		{"Coca-Cola, 2 L", 349, 399, 1, taxed, ""},
	},
	"starbucks.com": {
		{"Caffè Latte, Grande", 525, 595, 2, taxed, "Oat milk"},
		{"Iced Brown Sugar Oatmilk Shaken Espresso, Venti", 625, 695, 1, taxed, ""},
		{"Pink Drink, Grande", 575, 645, 1, taxed, ""},
		{"Caramel Macchiato, Tall", 495, 545, 1, taxed, ""},
		{"Cold Brew, Grande", 475, 545, 1, taxed, ""},
		{"Bacon, Gouda & Egg Sandwich", 595, 645, 1, taxed, ""},
		{"Butter Croissant", 375, 425, 1, taxed, ""},
		{"Cake Pop", 325, 375, 2, taxed, "Birthday"},
	},
	"chipotle.com": {
		{"Chicken Burrito Bowl", 1075, 1225, 2, taxed, "White rice, black beans, mild salsa"},
		{"Steak Burrito", 1225, 1375, 1, taxed, ""},
		{"Barbacoa Tacos", 1175, 1325, 1, taxed, ""},
		{"Chips & Guacamole", 495, 595, 1, taxed, ""},
		{"Side of Queso Blanco", 275, 325, 1, taxed, ""},
		{"Mexican Coca-Cola", 345, 395, 1, taxed, ""},
	},
	"mcdonalds.com": {
		{"Big Mac Meal, Medium", 1049, 1299, 2, taxed, ""},
		{"Quarter Pounder with Cheese", 659, 799, 1, taxed, ""},
		{"10 pc Chicken McNuggets", 549, 699, 1, taxed, ""},
		{"Large Fries", 449, 529, 2, taxed, ""},
		{"McFlurry with OREO Cookies", 479, 559, 1, taxed, ""},
		{"Egg McMuffin", 479, 549, 1, taxed, ""},
		{"Iced Coffee, Medium", 289, 349, 1, taxed, ""},
	},
}

// rideServices are the products of ride apps, by merchant domain, with
// the fare range of one trip.
var rideServices = map[string][]choice[good]{
	"uber.com": {
		{good{"UberX trip", 900, 4800, 1, untaxed, ""}, 60},
		{good{"Uber Comfort trip", 1300, 5800, 1, untaxed, ""}, 12},
		{good{"UberXL trip", 1600, 7200, 1, untaxed, ""}, 12},
		{good{"Uber Green trip", 950, 4900, 1, untaxed, ""}, 8},
		{good{"Uber Black trip", 3200, 12500, 1, untaxed, ""}, 4},
		{good{"Uber Reserve trip", 3500, 9500, 1, untaxed, "Scheduled ride"}, 4},
	},
	"lyft.com": {
		{good{"Lyft Standard ride", 850, 4600, 1, untaxed, ""}, 65},
		{good{"Lyft XL ride", 1500, 6900, 1, untaxed, ""}, 12},
		{good{"Lyft Priority Pickup ride", 1100, 5400, 1, untaxed, ""}, 10},
		{good{"Lyft Wait & Save ride", 700, 3900, 1, untaxed, ""}, 10},
		{good{"Lyft Black ride", 3000, 11000, 1, untaxed, ""}, 3},
	},
}

// cityPlaces name trip ends for ride descriptions.
var cityPlaces = []string{
	"Home", "Work", "Airport", "Downtown", "Whole Foods Market", "Union Station", "Convention Center",
	"Target", "Central Library", "Memorial Hospital", "City Stadium", "Riverfront Park", "Hotel",
}

// micromobility is per-minute scooter and bike rental.
var micromobility = []good{
	{"Lime scooter ride", 39, 49, 1, untaxed, "Per minute"},
	{"Lime e-bike ride", 39, 49, 1, untaxed, "Per minute"},
}

// stays are short-term rentals.
var stays = []string{
	"Cozy Craftsman Bungalow · Asheville, NC", "Oceanfront Condo · Miami Beach, FL",
	"Modern Loft in the Pearl · Portland, OR", "Lakeside Cabin with Hot Tub · Lake Tahoe, CA",
	"Historic Brownstone Suite · Savannah, GA", "Desert Casita · Joshua Tree, CA",
	"Mountain View A-Frame · Gatlinburg, TN", "Downtown Studio · Nashville, TN",
	"Beach Cottage · Outer Banks, NC", "Ski-in Condo · Breckenridge, CO",
	"Garden Apartment · Austin, TX", "Victorian Flat · San Francisco, CA",
}

// hotels by merchant domain; the generic list serves travel agencies.
var hotels = map[string][]string{
	"marriott.com": {"Courtyard Austin Downtown/Convention Center", "Marriott Marquis Chicago",
		"Residence Inn Seattle Downtown", "JW Marriott Nashville", "Fairfield Inn & Suites Orlando",
		"The Westin Denver Downtown", "Sheraton Grand Phoenix", "W New Orleans"},
	"hilton.com": {"Hilton Garden Inn Boston Logan", "Hampton Inn & Suites Savannah Historic District",
		"Conrad New York Downtown", "DoubleTree by Hilton San Diego Downtown",
		"Embassy Suites Atlanta Buckhead", "Homewood Suites Denver Downtown", "Hilton Chicago"},
	"": {"Hyatt Regency Seattle", "Kimpton Hotel Monaco Philadelphia", "The Roosevelt Hotel New Orleans",
		"Hotel Zaza Houston", "Ace Hotel Palm Springs", "Holiday Inn Express San Francisco Union Square",
		"Best Western Plus Miami Airport", "The Ritz-Carlton, Dallas", "La Quinta Inn Salt Lake City"},
}

var roomTypes = []string{"Standard King", "Two Queens", "Deluxe King, City View", "King Suite", "Queen Room"}

// airlines by merchant domain: carrier code and fare names.
// A main-cabin fare, one way, in cents: every fare class is a share of it.
const mainFareLo, mainFareHi = 11900, 21900

type airline struct {
	code  string
	fares []fare
}

// fare is a fare class: its price in percent of the main-cabin fare, and
// whether it includes checked bags (premium cabins do).
type fare struct {
	name string
	pct  int64
	bags bool
}

var airlines = map[string]airline{
	"delta.com": {"DL", []fare{{"Basic Economy", 80, false}, {"Main Cabin", 100, false}, {"Comfort+", 135, false},
		{"Delta First", 260, true}}},
	"united.com": {"UA", []fare{{"Basic Economy", 80, false}, {"Economy", 100, false}, {"Economy Plus", 130, false},
		{"United First", 250, true}}},
	"aa.com": {"AA", []fare{{"Basic Economy", 80, false}, {"Main Cabin", 100, false}, {"Main Cabin Extra", 130, false},
		{"First", 255, true}}},
	"southwest.com": {"WN", []fare{{"Wanna Get Away", 100, true}, {"Wanna Get Away Plus", 115, true},
		{"Anytime", 170, true}, {"Business Select", 230, true}}},
	"expedia.com": {"AS", []fare{{"Saver", 80, false}, {"Main", 100, false}, {"Premium Class", 135, false}}},
}

var airports = []string{"ATL", "LAX", "ORD", "DFW", "DEN", "JFK", "SFO", "SEA", "LAS", "MCO", "MIA",
	"BOS", "PHX", "IAH", "AUS", "BNA", "MSP", "DTW", "PHL", "SLC", "SAN", "RDU", "MSY"}

// games are full titles sold on every store; storeGoods are store-specific
// extras (currencies, passes, hardware).
var games = []good{
	{"EA SPORTS FC 25 Standard Edition", 6999, 6999, 1, taxed, ""},
	{"Call of Duty: Black Ops 6", 6999, 6999, 1, taxed, "Cross-Gen Bundle"},
	{"Elden Ring Shadow of the Erdtree", 3999, 3999, 1, taxed, "Expansion"},
	{"Hogwarts Legacy", 2999, 5999, 1, taxed, ""},
	{"Baldur's Gate 3", 5999, 5999, 1, taxed, ""},
	{"Madden NFL 25", 6999, 6999, 1, taxed, ""},
	{"Minecraft", 2999, 2999, 1, taxed, ""},
	{"Stardew Valley", 1499, 1499, 1, taxed, ""},
	{"Cyberpunk 2077: Ultimate Edition", 3999, 5999, 1, taxed, ""},
	{"Red Dead Redemption 2", 1999, 5999, 1, taxed, ""},
	{"Hades II", 2999, 2999, 1, taxed, "Early access"},
	{"Helldivers 2", 3999, 3999, 1, taxed, ""},
}

var storeGoods = map[string][]good{
	"xbox.com": {
		{"Xbox Game Pass Ultimate, 1 month", 1999, 1999, 1, taxed, ""},
		{"Xbox Wireless Controller, Carbon Black", 5999, 5999, 1, taxed | shipped, ""},
		{"Forza Horizon 5 Premium Edition", 9999, 9999, 1, taxed, ""},
		{"Halo Infinite: 2,000 Credits", 1999, 1999, 1, taxed, ""},
	},
	"playstation.com": {
		{"PlayStation Plus Essential, 1 month", 999, 999, 1, taxed, ""},
		{"DualSense Wireless Controller, Midnight Black", 7499, 7499, 1, taxed | shipped, ""},
		{"Marvel's Spider-Man 2", 6999, 6999, 1, taxed, ""},
		{"Fortnite: 2,800 V-Bucks", 2299, 2299, 1, taxed, ""},
	},
	"nintendo.com": {
		{"The Legend of Zelda: Tears of the Kingdom", 6999, 6999, 1, taxed, ""},
		{"Mario Kart 8 Deluxe", 5999, 5999, 1, taxed, ""},
		{"Animal Crossing: New Horizons", 5999, 5999, 1, taxed, ""},
		{"Nintendo Switch Online + Expansion Pack, 12 months", 4999, 4999, 1, taxed, ""},
		{"Super Mario Bros. Wonder", 5999, 5999, 1, taxed, ""},
	},
	"steampowered.com": {
		{"Counter-Strike 2 Prime Status Upgrade", 1499, 1499, 1, taxed, ""},
		{"Steam Deck OLED 512 GB", 54900, 54900, 1, taxed | shipped, ""},
		{"Terraria", 999, 999, 1, taxed, ""},
		{"Dota 2 Battle Pass Levels", 499, 999, 1, taxed, ""},
	},
	"epicgames.com": {
		{"Fortnite: 1,000 V-Bucks", 899, 899, 1, taxed, ""},
		{"Fortnite: 2,800 V-Bucks", 2299, 2299, 1, taxed, ""},
		{"Fortnite Battle Pass", 950, 950, 1, taxed, ""},
		{"Rocket League Credits, 1,100", 999, 999, 1, taxed, ""},
	},
	"roblox.com": {
		{"400 Robux", 499, 499, 1, taxed, ""},
		{"800 Robux", 999, 999, 1, taxed, ""},
		{"1,700 Robux", 1999, 1999, 1, taxed, ""},
		{"4,500 Robux", 4999, 4999, 1, taxed, ""},
		{"Roblox Premium 1000", 999, 999, 1, taxed, "Monthly Robux stipend"},
	},
	"twitch.tv": {
		{"Tier 1 Subscription", 599, 599, 1, taxed, ""},
		{"Tier 2 Subscription", 999, 999, 1, taxed, ""},
		{"Gift Subscription", 599, 599, 5, taxed, ""},
		{"500 Bits", 700, 700, 1, taxed, ""},
		{"1,500 Bits", 1995, 1995, 1, taxed, ""},
	},
	"pokemongolive.com": {
		{"1,200 PokéCoins", 999, 999, 1, taxed, ""},
		{"2,500 PokéCoins", 1999, 1999, 1, taxed, ""},
		{"550 PokéCoins", 499, 499, 1, taxed, ""},
		{"Community Day Special Research Ticket", 199, 199, 1, taxed, ""},
		{"GO Fest Ticket", 1499, 1499, 1, taxed, ""},
	},
}

// digitalExtras are one-off purchases at subscription merchants, beside the
// renewals of the account's plans, by merchant domain.
var digitalExtras = map[string][]good{
	"youtube.com": {
		{"Movie rental: Dune: Part Two", 599, 599, 1, taxed, "HD, 48 hour rental"},
		{"Movie purchase: Oppenheimer", 1999, 1999, 1, taxed, "4K"},
		{"Channel membership", 499, 499, 1, taxed, ""},
		{"Super Chat", 200, 2000, 1, taxed, ""},
	},
	"tv.youtube.com": {{"Pay-per-view event", 4999, 7999, 1, taxed, ""}},
	"audible.com": {
		{"Audiobook: Project Hail Mary", 1495, 2999, 1, taxed, ""},
		{"Audiobook: Lessons in Chemistry", 1495, 2899, 1, taxed, ""},
		{"Audiobook: The Women", 1495, 2799, 1, taxed, ""},
		{"3 extra credits", 3900, 3900, 1, taxed, ""},
	},
	"siriusxm.com": {{"Radio activation fee", 1500, 1500, 1, taxed, ""}},
	"adobe.com": {
		{"Adobe Stock, 10 standard assets", 2999, 2999, 1, taxed, ""},
		{"Generative credits add-on, 100 credits", 499, 499, 1, taxed, ""},
	},
	"microsoft.com": {{"Microsoft 365 Copilot add-on", 3000, 3000, 1, taxed, ""}},
	"chatgpt.com":   {{"API credits", 500, 5000, 1, taxed, "Prepaid usage"}},
	"zoom.us":       {{"Cloud recording storage, 30 GB", 1000, 1000, 1, taxed, ""}},
	"duolingo.com":  {{"Gems, 1,200", 499, 499, 1, taxed, ""}},
	"nytimes.com": {
		{"NYT Store: Crossword Puzzle Book", 1495, 1995, 1, taxed | shipped, ""},
		{"Gift subscription, 3 months", 3000, 4000, 1, taxed, ""},
	},
	"onepeloton.com": {
		{"Peloton Cycling Shoes", 12500, 12500, 1, taxed | shipped, ""},
		{"Peloton Dumbbells, 10 lb", 5000, 5000, 1, taxed | shipped, ""},
		{"Peloton Heart Rate Band", 9000, 9000, 1, taxed | shipped, ""},
		{"Peloton Bike Mat", 7500, 7500, 1, taxed | shipped, ""},
	},
	"planetfitness.com": {{"Annual membership fee", 4900, 4900, 1, taxed, ""}},
	"equinox.com": {
		{"Personal training session, 60 min", 15000, 19500, 1, taxed, ""},
		{"Equinox Spa: Deep tissue massage", 16000, 21000, 1, taxed, ""},
	},
	"classpass.com":       {{"Extra credits, 10", 1999, 2499, 1, taxed, ""}},
	"orangetheory.com":    {{"Class pack, 10 classes", 22900, 25900, 1, taxed, ""}},
	"anytimefitness.com":  {{"Key fob replacement", 2500, 2500, 1, taxed, ""}},
	"ring.com":            smartHomeGoods,
	"adt.com":             {{"Installation, standard", 9900, 19900, 1, taxed, ""}},
	"forhims.com":         telehealthGoods,
	"substack.com":        {{"Founding member subscription", 15000, 25000, 1, taxed, "Annual"}},
	"one.google.com":      {{"Google Play credit", 1000, 2500, 1, taxed, ""}},
	"economist.com":       {{"The Economist: print edition add-on", 2500, 2500, 1, taxed, ""}},
	"theatlantic.com":     {{"Gift subscription", 7999, 7999, 1, taxed, ""}},
	"washingtonpost.com":  {{"Gift subscription, 1 year", 3900, 12000, 1, taxed, ""}},
	"wsj.com":             {{"WSJ Wine: 12 bottle case", 8999, 15999, 1, taxed | shipped, ""}},
	"grammarly.com":       {{"Grammarly Authorship add-on", 500, 500, 1, taxed, ""}},
	"canva.com":           {{"Canva Print: business cards, 100", 1999, 3499, 1, taxed | shipped, ""}},
	"strava.com":          {{"Strava gift subscription, 1 year", 7999, 7999, 1, taxed, ""}},
	"paramountplus.com":   {{"UFC fight night pass", 4999, 7999, 1, taxed, ""}},
	"peacocktv.com":       {{"Premier League pass", 1499, 1499, 1, taxed, ""}},
	"sling.com":           {{"Sports Extra add-on", 1100, 1100, 1, taxed, ""}},
	"max.com":             {{"Gift card purchase", 2500, 10000, 1, untaxed, ""}},
	"hulu.com":            {{"Hulu Live TV unlimited screens", 999, 999, 1, taxed, ""}},
	"disneyplus.com":      {{"Premier Access: Mulan", 2999, 2999, 1, taxed, ""}},
	"notion.so":           {{"Notion AI add-on", 1000, 1000, 1, taxed, ""}},
	"dropbox.com":         {{"Dropbox Replay add-on", 999, 999, 1, taxed, ""}},
	"spotify.com":         {{"Audiobooks+ top-up, 10 hours", 1199, 1199, 1, taxed, ""}},
	"cricketwireless.com": {{"International calling add-on", 500, 1500, 1, taxed, ""}},
}

// telecomExtras are bill lines beside the plan.
var telecomExtras = []good{
	{"Device payment: iPhone 16 Pro (%d of 36)", 2778, 3333, 1, untaxed, ""},
	{"Device payment: Samsung Galaxy S24 (%d of 36)", 2222, 2778, 1, untaxed, ""},
	{"Device protection", 1700, 1900, 1, taxed, ""},
	{"International day pass", 1200, 1200, 2, taxed, ""},
	{"Streaming perk: Disney Bundle", 1000, 1000, 1, taxed, ""},
	{"Hotspot add-on, 50 GB", 1000, 1000, 1, taxed, ""},
	{"Equipment rental: Wi-Fi gateway", 1500, 1500, 1, taxed, ""},
}

// utilityMeter is a metered line of a utility bill: quantity is the usage
// in units, each priced rateLo..rateHi cents, plus a fixed monthly charge.
type utilityMeter struct {
	name, unit, units string
	rateLo, rateHi    int64
	usageLo, usageHi  int64
	fixedName         string
	fixed             int64
}

// utilityMeters by merchant domain.
var utilityMeters = map[string][]utilityMeter{
	"pge.com": {
		{"Electric delivery & generation", "kWh", "kWh", 33, 42, 250, 700, "", 0},
		{"Gas delivery & procurement", "therm", "therms", 210, 260, 12, 60, "Gas customer charge", 650},
	},
	"coned.com":       {{"Electric supply & delivery", "kWh", "kWh", 28, 36, 250, 700, "Basic service charge", 2100}},
	"duke-energy.com": {{"Energy charge", "kWh", "kWh", 12, 16, 600, 1600, "Basic customer charge", 1400}},
	"sce.com":         {{"Delivery & generation", "kWh", "kWh", 30, 40, 300, 900, "Basic charge", 1000}},
	"wm.com":          {{"Trash & recycling pickup", "week", "weeks", 800, 950, 4, 5, "Fuel & environmental charge", 550}},
	"amwater.com":     {{"Water usage", "hundred gallons", "hundred gallons", 45, 75, 25, 90, "Service charge", 1875}},
}
